//! Float kernels at extreme magnitudes (around 2^53 and 1e15, denormals,
//! infinities, NaN, -0) give TensorFlow 2.21's answers on CPU, denormals
//! flushed to zero as TF flushes them: every case of
//! `tests/data/tf-numerics/extremes.json` (made by TF itself with
//! `scripts/tf-oracle/numerics.py`) through a Session.

use opreg_runtime::SessionOptions;
use opreg_tests::numerics::{compare, load_cases, run_case};
use registry_core::denormal::DenormalMode;
use registry_core::proto::DataType;
use registry_core::tensor::Tensor;

fn link() {
    kernels_cpu::link();
}

#[test]
fn cpu_kernels_answer_as_tensorflow_at_extreme_magnitudes() {
    link();
    let cases = load_cases().unwrap();
    assert!(cases.len() > 100, "only {} cases", cases.len());
    let mut problems = Vec::new();
    let mut ran = 0;
    for case in &cases {
        match run_case(case, SessionOptions::default()) {
            Ok(out) => {
                ran += 1;
                problems.extend(compare(case, &out));
            }
            Err(why) => problems.push(format!("{}: {why}", case.label())),
        }
    }
    for p in problems.iter().take(usize::MAX) {
        println!("{p}");
    }
    assert!(
        problems.is_empty(),
        "{} differences from TensorFlow in {ran} cases (first 60 above)",
        problems.len()
    );
}

/// The examples of the issue, one by one: Rsqrt(5e-324) is inf, Log(5e-324)
/// is -inf, Floor(-5e-324) is -0, RealDiv(-5e-324, 5e-324) is NaN; with
/// `DenormalMode::Ieee` the denormals are kept.
#[test]
fn denormals_flush_by_default_and_stay_when_asked() {
    link();
    if !DenormalMode::switchable() {
        return;
    }
    let tiny = f64::from_bits(1);
    let run = |op: &str, inputs: &[f64], mode: DenormalMode| -> f64 {
        let case = opreg_tests::numerics::Case {
            op: op.to_owned(),
            t: DataType::DtDouble,
            attrs: Default::default(),
            inputs: inputs
                .iter()
                .map(|&v| Tensor::from_vec([1], vec![v]).unwrap())
                .collect(),
            axis: None,
            expected: Tensor::from_vec([1], vec![0.0f64]).unwrap(),
        };
        let options = SessionOptions {
            denormals: mode,
            ..Default::default()
        };
        run_case(&case, options).unwrap().as_slice::<f64>().unwrap()[0]
    };
    let flush = DenormalMode::FlushToZero;
    assert_eq!(run("Rsqrt", &[tiny], flush), f64::INFINITY);
    assert_eq!(run("Log", &[tiny], flush), f64::NEG_INFINITY);
    let floor = run("Floor", &[-tiny], flush);
    assert_eq!(floor.to_bits(), (-0.0f64).to_bits());
    assert!(run("RealDiv", &[-tiny, tiny], flush).is_nan());
    // Abs is a bit operation: TF keeps the denormal, and so do we.
    assert_eq!(run("Abs", &[-tiny], flush), tiny);

    let ieee = DenormalMode::Ieee;
    assert!(run("Rsqrt", &[tiny], ieee).is_finite());
    assert!(run("Log", &[tiny], ieee) > -745.0);
    assert_eq!(run("Floor", &[-tiny], ieee), -1.0);
    assert_eq!(run("RealDiv", &[-tiny, tiny], ieee), -1.0);
}
