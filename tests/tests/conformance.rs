//! TensorFlow conformance: every case in `shared/conformance/*.json`, in
//! `tests/data/tf-specs/*.json` (made by `scripts/tf-oracle/specs.py`: its
//! errors must match TF's words exactly) and in the directories of
//! `OPREG_CONFORMANCE_DIRS` (colon-separated) builds the
//! OpDef TensorFlow 2.21 builds, byte for byte, or is rejected as TF rejects
//! it. Prints one summary line per file.

use std::path::PathBuf;

use opreg_tests::conformance::{json_files, run_file};
use opreg_tests::shared_dir;

#[test]
fn conformance_with_tensorflow_2_21() {
    let mut dirs = vec![
        shared_dir().join("conformance"),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/tf-specs"),
    ];
    if let Some(extra) = std::env::var_os("OPREG_CONFORMANCE_DIRS") {
        dirs.extend(std::env::split_paths(&extra).filter(|p| !p.as_os_str().is_empty()));
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in &dirs {
        let found = json_files(dir);
        assert!(
            !found.is_empty(),
            "no conformance JSON files in {}",
            dir.display()
        );
        files.extend(found);
    }
    let mut failed = 0;
    for file in &files {
        let report = run_file(file).unwrap_or_else(|e| panic!("{e}"));
        println!("{report}");
        for failure in report.failures.iter().take(40) {
            println!("  FAIL {failure}");
        }
        failed += report.failures.len();
    }
    assert_eq!(
        failed, 0,
        "{failed} conformance cases differ from TensorFlow (listed above)"
    );
}
