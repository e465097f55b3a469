//! What users see when a spec is wrong: which spec, where inside it (the
//! byte span and the caret line), TF's wording, and a suggestion when a
//! typo is likely. Also: every error of an op is reported at once.

use registry_spec::{OpSpec, SpecError, SpecErrorKind, SpecSite};

fn errors(spec: OpSpec) -> Vec<SpecError> {
    spec.build().expect_err("the spec is invalid").0
}

fn only(spec: OpSpec) -> SpecError {
    let mut all = errors(spec);
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

fn underlined(e: &SpecError) -> &str {
    &e.spec[e.span.clone()]
}

#[test]
fn unknown_type_in_set_points_at_the_word_and_suggests() {
    let e = only(OpSpec::new("Abs").input("x: T").attr("T: {half, flaot}"));
    assert_eq!(e.site, SpecSite::Attr(0));
    assert_eq!(e.kind, SpecErrorKind::UnknownTypeName("flaot".into()));
    assert_eq!(underlined(&e), "flaot");
    assert_eq!(e.suggestion.as_deref(), Some("float"));
    assert_eq!(
        e.to_string(),
        "Unrecognized type string 'flaot'; did you mean 'float'? from Attr(\"T: {half, flaot}\") for Op Abs"
    );
    assert_eq!(e.snippet(), "T: {half, flaot}\n          ^^^^^");
}

#[test]
fn unknown_attr_reference_suggests_the_declared_attr() {
    let e = only(OpSpec::new("Abs").input("x: Tx").attr("T: type"));
    assert_eq!(e.site, SpecSite::Input(0));
    assert_eq!(e.kind, SpecErrorKind::UnknownAttr("Tx".into()));
    assert_eq!(underlined(&e), "Tx");
    assert_eq!(e.suggestion.as_deref(), Some("T"));
}

#[test]
fn data_type_used_as_attr_type_suggests_a_set() {
    let e = only(OpSpec::new("Op").attr("T: int32"));
    assert!(matches!(e.kind, SpecErrorKind::Trailing { .. }), "{e:?}");
    assert_eq!(e.suggestion.as_deref(), Some("{int32}"));
}

#[test]
fn misspelled_attr_type_suggests_the_keyword() {
    let e = only(OpSpec::new("Op").attr("n: itn"));
    assert!(matches!(e.kind, SpecErrorKind::AttrType { .. }), "{e:?}");
    assert_eq!(underlined(&e), "itn");
    assert_eq!(e.suggestion.as_deref(), Some("int"));
}

#[test]
fn bad_minimum_and_bad_default_span_their_text() {
    let e = only(OpSpec::new("Op").attr("n: int >= x"));
    assert!(matches!(e.kind, SpecErrorKind::Minimum { .. }));
    assert_eq!(underlined(&e), " x");
    let e = only(OpSpec::new("Op").attr("n: int = 0x10"));
    assert_eq!(
        e.kind,
        SpecErrorKind::DefaultValue {
            text: "0x10".into()
        }
    );
    assert_eq!(underlined(&e), "0x10");
}

#[test]
fn every_error_of_an_op_is_reported_at_once() {
    let all = errors(
        OpSpec::new("Many")
            .attr("T: {flaot}")
            .attr("n: int >= x")
            .input("x: T")
            .input("Y: float")
            .output("z: Ref(float"),
    );
    let sites: Vec<SpecSite> = all.iter().map(|e| e.site).collect();
    // The input `x: T` is not reported: it only repeats the failure of T.
    assert_eq!(
        sites,
        vec![
            SpecSite::Attr(0),
            SpecSite::Attr(1),
            SpecSite::Input(1),
            SpecSite::Output(0)
        ]
    );
}

#[test]
fn validation_errors_point_at_the_declaring_spec() {
    let e = only(OpSpec::new("Op").attr("x: {'a', 'b'} = 'c'"));
    assert_eq!(e.site, SpecSite::Attr(0));
    assert!(
        e.to_string()
            .contains("is not in the list of allowed values"),
        "{e}"
    );
    let e = only(OpSpec::new("lower").input("x: float"));
    assert_eq!(e.site, SpecSite::Name);
    assert!(e.to_string().starts_with("Invalid name: lower"), "{e}");
    let e = only(OpSpec::new("Op").input("a: float").output("a: float"));
    assert_eq!(e.site, SpecSite::Output(0));
}

#[test]
fn angle_form_is_a_type_set() {
    let angle = OpSpec::new("Op")
        .attr("T: <float, int32>")
        .input("x: T")
        .build()
        .unwrap();
    let braces = OpSpec::new("Op")
        .attr("T: {float, int32}")
        .input("x: T")
        .build()
        .unwrap();
    assert_eq!(angle, braces);
    let e = only(OpSpec::new("Op").attr("T: <float, int32}"));
    assert!(
        matches!(e.kind, SpecErrorKind::SetSeparator { .. }),
        "{e:?}"
    );
}

#[test]
fn doc_names_must_match_and_are_suggested() {
    let e = only(
        OpSpec::new("Op")
            .input("input: float")
            .doc("Summary.\n\nimput: the input."),
    );
    assert_eq!(e.site, SpecSite::Doc);
    assert_eq!(e.kind, SpecErrorKind::DocName("imput".into()));
    assert_eq!(e.suggestion.as_deref(), Some("input"));
    assert_eq!(&e.spec[e.span.clone()], "imput");
}

#[test]
fn doc_text_fills_summary_description_and_args() {
    let op = OpSpec::new("Op")
        .input("x: float")
        .attr("n: int")
        .doc("Does a thing.\n\nLonger text\nover lines.\n\nx: the input,\n  continued.\nn: how many.")
        .build()
        .unwrap();
    assert_eq!(op.summary, "Does a thing.");
    assert_eq!(op.description, "Longer text\nover lines.");
    assert_eq!(op.input_arg[0].description, "the input,\ncontinued.");
    assert_eq!(op.attr[0].description, "how many.");
}
