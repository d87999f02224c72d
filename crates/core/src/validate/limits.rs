//! The validator's options: every limit has a default and a hard cap (docs/spec.md section 6).

use serde_json::{Map, Value};

/// One option: its JS name, default and hard cap.
pub struct LimitSpec {
    pub name: &'static str,
    pub default: usize,
    pub cap: usize,
}

/// The options in the order the documentation lists them.
pub const LIMIT_SPECS: [LimitSpec; 11] = [
    LimitSpec {
        name: "maxErrors",
        default: 8,
        cap: 64,
    },
    LimitSpec {
        name: "maxDepth",
        default: 64,
        cap: 128,
    },
    LimitSpec {
        name: "maxProperties",
        default: 1_000,
        cap: 100_000,
    },
    LimitSpec {
        name: "maxStringLength",
        default: 1_000_000,
        cap: 8_388_608,
    },
    LimitSpec {
        name: "maxArrayLength",
        default: 10_000,
        cap: 100_000,
    },
    LimitSpec {
        name: "maxSchemaBytes",
        default: 262_144,
        cap: 1_048_576,
    },
    LimitSpec {
        name: "maxSchemaDepth",
        default: 64,
        cap: 128,
    },
    LimitSpec {
        name: "maxSchemaProperties",
        default: 10_000,
        cap: 100_000,
    },
    LimitSpec {
        name: "maxSchemaRefs",
        default: 128,
        cap: 1_024,
    },
    LimitSpec {
        name: "maxSchemaKeywords",
        default: 10_000,
        cap: 100_000,
    },
    LimitSpec {
        name: "maxCompiledSchemas",
        default: 256,
        cap: 1_024,
    },
];

/// The resolved limits of one validator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_errors: usize,
    pub max_depth: usize,
    pub max_properties: usize,
    pub max_string_length: usize,
    pub max_array_length: usize,
    pub max_schema_bytes: usize,
    pub max_schema_depth: usize,
    pub max_schema_properties: usize,
    pub max_schema_refs: usize,
    pub max_schema_keywords: usize,
    pub max_compiled_schemas: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self::from_values(LIMIT_SPECS.map(|s| s.default))
    }
}

/// An option out of range: the message names the option and its cap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} must be a positive safe integer no greater than {cap}")]
pub struct LimitError {
    pub name: &'static str,
    pub cap: usize,
}

impl Limits {
    fn from_values(v: [usize; 11]) -> Self {
        Limits {
            max_errors: v[0],
            max_depth: v[1],
            max_properties: v[2],
            max_string_length: v[3],
            max_array_length: v[4],
            max_schema_bytes: v[5],
            max_schema_depth: v[6],
            max_schema_properties: v[7],
            max_schema_refs: v[8],
            max_schema_keywords: v[9],
            max_compiled_schemas: v[10],
        }
    }

    /// Reads the limits from an options object. A missing option takes its default; anything but
    /// an integer in `1..=cap` is an error naming the option and its cap (`null` included: JSON
    /// text turns `NaN` and `Infinity` into `null`). Unknown keys are ignored.
    pub fn from_options(options: &Map<String, Value>) -> Result<Self, LimitError> {
        let mut values = LIMIT_SPECS.map(|s| s.default);
        for (slot, spec) in values.iter_mut().zip(LIMIT_SPECS.iter()) {
            let Some(value) = options.get(spec.name) else {
                continue;
            };
            let err = LimitError {
                name: spec.name,
                cap: spec.cap,
            };
            let n = match value {
                Value::Number(n) => {
                    if let Some(u) = n.as_u64() {
                        u
                    } else if let Some(f) = n.as_f64() {
                        // 5.0 arrives as a float from some serializers; 5.5 is not an integer.
                        if f.fract() != 0.0 || f < 1.0 || f > spec.cap as f64 {
                            return Err(err);
                        }
                        f as u64
                    } else {
                        return Err(err);
                    }
                }
                _ => return Err(err),
            };
            if n < 1 || n > spec.cap as u64 {
                return Err(err);
            }
            *slot = n as usize;
        }
        Ok(Self::from_values(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opts(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_match_the_spec() {
        let l = Limits::default();
        assert_eq!(l.max_errors, 8);
        assert_eq!(l.max_schema_bytes, 262_144);
        assert_eq!(l.max_compiled_schemas, 256);
    }

    #[test]
    fn accepts_the_cap_and_rejects_past_it() {
        let l =
            Limits::from_options(&opts(json!({"maxErrors": 64, "maxCompiledSchemas": 1}))).unwrap();
        assert_eq!(l.max_errors, 64);
        assert_eq!(l.max_compiled_schemas, 1);
        let e = Limits::from_options(&opts(json!({"maxErrors": 65}))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "maxErrors must be a positive safe integer no greater than 64"
        );
        for bad in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!(null),
            json!("8"),
            json!(true),
        ] {
            let e = Limits::from_options(&opts(json!({"maxDepth": bad}))).unwrap_err();
            assert_eq!(e.name, "maxDepth");
            assert_eq!(e.cap, 128);
        }
    }
}
