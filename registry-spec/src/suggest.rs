//! "Did you mean" suggestions, one rule for every message of opreg: a spec's
//! type names, `#[op]` and `#[kernel]` arguments and types, op names in the
//! registry, attr names of a NodeDef.

/// The candidates nearest to `word`, nearest first (ties by name), at most
/// `max` of them: those within a case-insensitive Damerau-Levenshtein
/// distance of about one edit per three characters (at least one, and
/// fewer edits than `word` has characters), and those that `word` (of three
/// characters or more) begins or that begin `word`. `word` itself is never
/// suggested.
///
/// ```
/// use registry_spec::suggest::suggestions;
/// let names = ["Abs", "Add", "AddN", "Conv2D", "Relu", "Relu6"];
/// assert_eq!(suggestions("Relu5", names, 3), ["Relu", "Relu6"]);
/// assert_eq!(suggestions("conv2d", names, 3), ["Conv2D"]);
/// assert_eq!(suggestions("Ad", names, 3), ["Add"]);
/// assert!(suggestions("Softmax", names, 3).is_empty());
/// ```
pub fn suggestions<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let lower = word.to_lowercase();
    let len = word.chars().count();
    let mut scored: Vec<(usize, &'a str)> = candidates
        .into_iter()
        .filter(|&candidate| candidate != word && !candidate.is_empty())
        .filter_map(|candidate| {
            let candidate_lower = candidate.to_lowercase();
            let distance = strsim::damerau_levenshtein(&lower, &candidate_lower);
            let limit = (len.max(candidate.chars().count()) / 3).max(1);
            let typo = distance <= limit && distance < len;
            let prefix = len >= 3
                && (candidate_lower.starts_with(&lower) || lower.starts_with(&candidate_lower));
            (typo || prefix).then_some((distance, candidate))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup();
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

/// The one candidate nearest to `word` ([`suggestions`]' first), if any.
///
/// ```
/// use registry_spec::suggest::nearest;
/// assert_eq!(nearest("flaot", ["float", "int32"]), Some("float"));
/// assert_eq!(nearest("banana", ["float", "int32"]), None);
/// ```
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    suggestions(word, candidates, 1).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_case_prefixes_and_strangers() {
        assert_eq!(nearest("flaot", ["float", "int32"]), Some("float"));
        assert_eq!(nearest("int23", ["float", "int32"]), Some("int32"));
        assert_eq!(nearest("Flaot", ["float"]), Some("float"));
        assert_eq!(nearest("X", ["x"]), Some("x"));
        assert_eq!(nearest("x", ["y"]), None);
        assert_eq!(nearest("typ", ["type", "int"]), Some("type"));
        // Prefixes: a word cut short, or with something extra.
        assert_eq!(nearest("shape", ["shape_fn", "input"]), Some("shape_fn"));
        assert_eq!(nearest("inputs", ["input", "output"]), Some("input"));
        let names = ["Abs", "Add", "AddN", "Conv2D", "MatMul", "BatchMatMul"];
        assert_eq!(suggestions("Abz", names, 3), ["Abs"]);
        assert_eq!(suggestions("MatMull", names, 3), ["MatMul"]);
        assert_eq!(suggestions("Adds", names, 3), ["Add", "AddN"]);
        assert!(suggestions("zzzzzzzzzz", ["transpose_a", "T"], 3).is_empty());
    }
}
