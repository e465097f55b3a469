//! The state of one cell of the coverage grid, and how it is decided.

/// What one cell says: whether a device has a kernel for one type of one
/// attr of one op (and, with `--against`, whether TensorFlow has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CellState {
    /// A kernel accepts the type (no `--against`).
    Covered,
    /// The op allows the type and opreg has tensors of it, but no kernel
    /// accepts it (no `--against`).
    Missing,
    /// The op allows the type but opreg has no tensors of it; TF (if
    /// compared) has no kernel for it either.
    NoTensor,
    /// Both TF and opreg have a kernel for the type.
    Both,
    /// opreg has a kernel for the type, TF does not.
    OursOnly,
    /// TF has a kernel for the type, opreg does not (a gap).
    TfOnly,
    /// TF has a kernel for the type, but opreg has no tensors of it.
    TfOnlyNoTensor,
    /// The op allows the type, opreg has tensors of it, neither has a kernel.
    Neither,
}

impl CellState {
    /// Every state, in legend order.
    pub const ALL: [CellState; 8] = [
        CellState::Covered,
        CellState::Both,
        CellState::OursOnly,
        CellState::Missing,
        CellState::TfOnly,
        CellState::TfOnlyNoTensor,
        CellState::Neither,
        CellState::NoTensor,
    ];

    /// The state's name in the JSON output and the SVG's classes.
    pub fn name(self) -> &'static str {
        match self {
            CellState::Covered => "covered",
            CellState::Missing => "missing",
            CellState::NoTensor => "no_tensor",
            CellState::Both => "both",
            CellState::OursOnly => "ours_only",
            CellState::TfOnly => "tf_only",
            CellState::TfOnlyNoTensor => "tf_only_no_tensor",
            CellState::Neither => "neither",
        }
    }

    /// A human description for legends.
    pub fn label(self) -> &'static str {
        match self {
            CellState::Covered => "kernel",
            CellState::Missing => "allowed, no kernel",
            CellState::NoTensor => "allowed, no opreg tensors of the type",
            CellState::Both => "TF and opreg",
            CellState::OursOnly => "opreg only",
            CellState::TfOnly => "TF only",
            CellState::TfOnlyNoTensor => "TF only (type without opreg tensors)",
            CellState::Neither => "allowed, neither has a kernel",
        }
    }

    /// Whether opreg has a kernel in this state.
    pub fn ours(self) -> bool {
        matches!(
            self,
            CellState::Covered | CellState::Both | CellState::OursOnly
        )
    }

    /// Whether TF has a kernel in this state.
    pub fn tf(self) -> bool {
        matches!(
            self,
            CellState::Both | CellState::TfOnly | CellState::TfOnlyNoTensor
        )
    }
}

/// The state of a cell from whether opreg and (with `--against`) TF have a
/// kernel for it, and whether opreg has tensors of its type.
pub(super) fn state(ours: bool, tf: Option<bool>, supported: bool) -> CellState {
    match (ours, tf) {
        (true, None) => CellState::Covered,
        (false, None) if supported => CellState::Missing,
        (true, Some(true)) => CellState::Both,
        (true, Some(false)) => CellState::OursOnly,
        (false, Some(true)) if supported => CellState::TfOnly,
        (false, Some(true)) => CellState::TfOnlyNoTensor,
        (false, Some(false)) if supported => CellState::Neither,
        (false, _) => CellState::NoTensor,
    }
}
