//! "Did you mean" suggestions: the nearest candidate by edit distance.

/// The candidate nearest to `word`, if it is close enough to be a likely typo
/// (Damerau-Levenshtein distance at most 2, and less than the word's length).
pub(crate) fn nearest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    if word.is_empty() {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let distance = strsim::damerau_levenshtein(&lower, &candidate.to_ascii_lowercase());
        let limit = if word.len() <= 3 { 1 } else { 2 };
        if distance <= limit && distance < word.len() && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c.to_owned())
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn finds_typos_and_rejects_strangers() {
        assert_eq!(
            nearest("flaot", ["float", "int32"]).as_deref(),
            Some("float")
        );
        assert_eq!(
            nearest("int23", ["float", "int32"]).as_deref(),
            Some("int32")
        );
        assert_eq!(nearest("Flaot", ["float"]).as_deref(), Some("float"));
        assert_eq!(nearest("banana", ["float", "int32"]), None);
        assert_eq!(nearest("x", ["y"]), None);
    }
}
