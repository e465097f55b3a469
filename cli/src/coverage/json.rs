//! The JSON document of `opreg coverage --format json`.

use opreg_proto::DataType;
use serde_json::{Value as Json, json};

use super::Coverage;

impl Coverage {
    /// The JSON document described in the [module docs](crate::coverage).
    pub fn to_json(&self) -> Json {
        let names = |types: &[DataType]| -> Vec<&'static str> {
            types.iter().map(|t| t.as_str_name()).collect()
        };
        let rows: Vec<Json> = self
            .rows
            .iter()
            .map(|row| {
                let devices: serde_json::Map<String, Json> = self
                    .devices
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let cells: serde_json::Map<String, Json> = row
                            .cells(i)
                            .into_iter()
                            .map(|(t, s)| {
                                let key = t.map_or("any", |t| t.as_str_name());
                                (key.to_owned(), json!(s.name()))
                            })
                            .collect();
                        let mut entry = json!({"kernels": row.devices[i].kernels, "cells": cells});
                        if let Some(tf) = &row.devices[i].tf {
                            entry["tf_kernels"] = json!(tf.kernels);
                        }
                        (d.clone(), entry)
                    })
                    .collect();
                json!({
                    "op": row.op,
                    "attr": row.attr,
                    "allowed": names(&row.allowed),
                    "no_tensor": names(&row.no_tensor()),
                    "devices": devices,
                })
            })
            .collect();
        let summary: serde_json::Map<String, Json> = self
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let s = self.summary(i);
                let mut entry = json!({
                    "ops": s.ops,
                    "ops_with_kernel": s.ops_with_kernel,
                    "ops_complete": s.ops_complete,
                    "cells_allowed": s.cells_allowed,
                    "cells_no_tensor": s.cells_no_tensor,
                    "cells_covered": s.cells_covered,
                });
                if let Some(tf) = s.tf {
                    entry["tf"] = json!({
                        "cells": tf.cells,
                        "both": tf.both,
                        "tf_only": tf.tf_only,
                        "tf_only_no_tensor": tf.tf_only_no_tensor,
                        "ours_only": tf.ours_only,
                    });
                }
                (d.clone(), entry)
            })
            .collect();
        let against = self.against.as_ref().map(|cmp| {
            let kernels: serde_json::Map<String, Json> = self
                .devices
                .iter()
                .zip(&cmp.kernels)
                .map(|(d, k)| {
                    (
                        d.clone(),
                        json!({
                            "total": k.total,
                            "matched": k.matched,
                            "no_tensor": k.no_tensor,
                            "disallowed": k.disallowed,
                            "unmatched": k.unmatched,
                        }),
                    )
                })
                .collect();
            json!({"source": cmp.source, "kernels": kernels})
        });
        json!({
            "devices": self.devices,
            "dtypes": names(&self.dtypes),
            "against": against,
            "rows": rows,
            "summary": summary,
        })
    }
}
