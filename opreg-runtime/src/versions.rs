//! GraphDef versions and op deprecation, checked on load as TensorFlow 2.21
//! checks them (`CheckVersions` in `tensorflow/core/framework/versions.cc`,
//! `CheckOpDeprecation` in `tensorflow/core/framework/op_def_util.cc`, and
//! the forward-compatibility note of
//! `tensorflow/core/common_runtime/graph_constructor.cc`).
//!
//! opreg reads graphs as TensorFlow 2.21 does, so it is a consumer of GraphDef
//! version [`GRAPH_DEF_VERSION`] and its messages name that TensorFlow
//! version, word for word as TF prints them.
//!
//! ```
//! use opreg_proto::VersionDef;
//! use opreg_runtime::versions::check_versions;
//!
//! let too_new = VersionDef { producer: 10, min_consumer: 9999, bad_consumers: vec![] };
//! assert_eq!(
//!     check_versions(Some(&too_new)).unwrap_err().to_string(),
//!     "GraphDef min consumer version 9999 above current version 2474 for TensorFlow 2.21.0.  \
//!      Please upgrade TensorFlow."
//! );
//! ```

use opreg_proto::{OpDef, VersionDef};

/// The GraphDef version of TensorFlow 2.21 (`TF_GRAPH_DEF_VERSION`), the
/// version opreg consumes.
pub const GRAPH_DEF_VERSION: i32 = 2474;
/// The oldest producer version accepted (`TF_GRAPH_DEF_VERSION_MIN_PRODUCER`).
pub const GRAPH_DEF_VERSION_MIN_PRODUCER: i32 = 0;
/// The TensorFlow release whose GraphDef rules opreg follows, as its
/// messages name it.
pub const TENSORFLOW_VERSION: &str = "2.21.0";
/// How far ahead of [`GRAPH_DEF_VERSION`] a producer may be before a failed
/// load is blamed on the gap (TF's forward-compatibility window, in versions).
pub const FORWARD_COMPATIBILITY_WINDOW: i32 = 21;

/// A graph whose versions this consumer refuses, or an op it may no longer
/// run. The messages are TensorFlow's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VersionError {
    /// `versions.producer` is older than the oldest supported producer.
    #[error(
        "GraphDef producer version {producer} below min producer {min_producer} supported by \
         TensorFlow {TENSORFLOW_VERSION}.  Please regenerate your graph."
    )]
    ProducerTooOld {
        /// The graph's producer version.
        producer: i32,
        /// The oldest accepted.
        min_producer: i32,
    },
    /// `versions.min_consumer` is newer than this consumer.
    #[error(
        "GraphDef min consumer version {min_consumer} above current version {consumer} for \
         TensorFlow {TENSORFLOW_VERSION}.  Please upgrade TensorFlow."
    )]
    ConsumerTooOld {
        /// The graph's minimum consumer version.
        min_consumer: i32,
        /// This consumer's version.
        consumer: i32,
    },
    /// `versions.bad_consumers` lists this consumer.
    #[error(
        "GraphDef disallows consumer version {consumer}.  Please upgrade TensorFlow: this version \
         is likely buggy."
    )]
    BadConsumer {
        /// This consumer's version.
        consumer: i32,
    },
    /// The graph's producer reached the version at which an op it uses was
    /// removed.
    #[error(
        "Op {op} is not available in GraphDef version {producer}. It has been removed in version \
         {version}. {explanation}."
    )]
    OpRemoved {
        /// The op.
        op: String,
        /// The graph's producer version.
        producer: i32,
        /// The version the op was deprecated at.
        version: i32,
        /// The OpDef's explanation.
        explanation: String,
    },
}

/// TF's `CheckVersions` for a GraphDef's `versions` (absent means producer 0,
/// no minimum consumer, no bad consumers): the producer is not older than
/// [`GRAPH_DEF_VERSION_MIN_PRODUCER`], the minimum consumer not newer than
/// [`GRAPH_DEF_VERSION`], and this consumer is not listed as bad.
pub fn check_versions(versions: Option<&VersionDef>) -> Result<(), VersionError> {
    let Some(versions) = versions else {
        return Ok(());
    };
    if versions.producer < GRAPH_DEF_VERSION_MIN_PRODUCER {
        return Err(VersionError::ProducerTooOld {
            producer: versions.producer,
            min_producer: GRAPH_DEF_VERSION_MIN_PRODUCER,
        });
    }
    if versions.min_consumer > GRAPH_DEF_VERSION {
        return Err(VersionError::ConsumerTooOld {
            min_consumer: versions.min_consumer,
            consumer: GRAPH_DEF_VERSION,
        });
    }
    if versions.bad_consumers.contains(&GRAPH_DEF_VERSION) {
        return Err(VersionError::BadConsumer {
            consumer: GRAPH_DEF_VERSION,
        });
    }
    Ok(())
}

/// TF's `CheckOpDeprecation`: an op deprecated at version V cannot be used by
/// a graph whose producer is V or newer.
pub fn check_op_deprecation(op_def: &OpDef, producer: i32) -> Result<(), VersionError> {
    match &op_def.deprecation {
        Some(dep) if producer >= dep.version => Err(VersionError::OpRemoved {
            op: op_def.name.clone(),
            producer,
            version: dep.version,
            explanation: dep.explanation.clone(),
        }),
        _ => Ok(()),
    }
}

/// The warning TF logs for an op that still works in a graph of this producer
/// but is deprecated at a later version (`None` when the op is not
/// deprecated, or is already removed for this producer).
///
/// ```
/// use opreg_proto::{OpDef, OpDeprecation};
/// use opreg_runtime::versions::deprecation_warning;
///
/// let op = OpDef {
///     name: "AdjustContrast".into(),
///     deprecation: Some(OpDeprecation { version: 2, explanation: "Use AdjustContrastv2 instead".into() }),
///     ..Default::default()
/// };
/// assert_eq!(
///     deprecation_warning(&op, 1).unwrap(),
///     "Op AdjustContrast is deprecated. It will cease to work in GraphDef version 2. \
///      Use AdjustContrastv2 instead."
/// );
/// assert_eq!(deprecation_warning(&op, 2), None);
/// ```
pub fn deprecation_warning(op_def: &OpDef, producer: i32) -> Option<String> {
    let dep = op_def.deprecation.as_ref()?;
    (producer < dep.version).then(|| {
        format!(
            "Op {} is deprecated. It will cease to work in GraphDef version {}. {}.",
            op_def.name, dep.version, dep.explanation
        )
    })
}

/// True when a graph of this producer is newer than this consumer by more
/// than TF's forward-compatibility window, so a failure to load it may come
/// from the gap.
pub fn beyond_forward_compatibility(versions: Option<&VersionDef>) -> bool {
    versions.is_some_and(|v| v.producer > GRAPH_DEF_VERSION + FORWARD_COMPATIBILITY_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(producer: i32, min_consumer: i32, bad: &[i32]) -> VersionDef {
        VersionDef {
            producer,
            min_consumer,
            bad_consumers: bad.to_vec(),
        }
    }

    #[test]
    fn checks_in_tf_order() {
        assert_eq!(check_versions(None), Ok(()));
        assert_eq!(
            check_versions(Some(&versions(GRAPH_DEF_VERSION, GRAPH_DEF_VERSION, &[1]))),
            Ok(())
        );
        assert!(matches!(
            check_versions(Some(&versions(-7, 99999, &[GRAPH_DEF_VERSION]))),
            Err(VersionError::ProducerTooOld { producer: -7, .. })
        ));
        assert!(matches!(
            check_versions(Some(&versions(
                1,
                GRAPH_DEF_VERSION + 1,
                &[GRAPH_DEF_VERSION]
            ))),
            Err(VersionError::ConsumerTooOld { .. })
        ));
        assert_eq!(
            check_versions(Some(&versions(1, 0, &[3, GRAPH_DEF_VERSION]))),
            Err(VersionError::BadConsumer {
                consumer: GRAPH_DEF_VERSION
            })
        );
    }

    #[test]
    fn window() {
        assert!(!beyond_forward_compatibility(Some(&versions(
            GRAPH_DEF_VERSION + 21,
            0,
            &[]
        ))));
        assert!(beyond_forward_compatibility(Some(&versions(
            GRAPH_DEF_VERSION + 22,
            0,
            &[]
        ))));
        assert!(!beyond_forward_compatibility(None));
    }
}
