//! Nearest registered names for a name that is not registered.

/// How many suggestions a `NotFound` error carries at most.
const MAX_SUGGESTIONS: usize = 3;

/// The registered names nearest to `wanted`, nearest first: a name equal up to
/// case first, then names within a small edit distance (about one edit per
/// three characters), ties broken by name.
pub(crate) fn nearest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let limit = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter(|name| *name != wanted)
        .filter_map(|name| {
            let distance = strsim::damerau_levenshtein(&wanted_lower, &name.to_lowercase());
            (distance <= limit).then_some((distance, name))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn typo_case_and_limit() {
        let names = ["Abs", "Add", "AddN", "Conv2D", "MatMul", "BatchMatMul"];
        assert_eq!(nearest("Abz", names), ["Abs"]);
        assert_eq!(nearest("conv2d", names), ["Conv2D"]);
        assert_eq!(nearest("MatMull", names), ["MatMul"]);
        assert!(nearest("Softmax", names).is_empty());
        assert_eq!(nearest("Ad", names), ["Add"]);
        assert_eq!(nearest("Adds", names), ["Add", "AddN"]);
    }
}
