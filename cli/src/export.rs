//! `opreg ops export --format json`: any message of `opreg-proto` as readable
//! JSON, built from its descriptor (field names as in the .proto files, enums
//! by name, only fields that are set).

use base64::Engine;
use opreg_proto::prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value,
};
use serde_json::{Map, Value as Json};

/// `message` as pretty-printed JSON, with a final newline.
pub(crate) fn to_json<M: prost::Message + prost::Name>(message: &M) -> Result<String, String> {
    let descriptor = opreg_proto::descriptor_pool()
        .get_message_by_name(&M::full_name())
        .ok_or_else(|| format!("no descriptor for {}", M::full_name()))?;
    let dynamic = DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())
        .map_err(|e| e.to_string())?;
    let mut text =
        serde_json::to_string_pretty(&message_json(&dynamic)).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

fn message_json(message: &DynamicMessage) -> Json {
    let mut object = Map::new();
    // Declaration order, as in the .proto file.
    for field in message.descriptor().fields() {
        if message.has_field(&field) {
            object.insert(
                field.name().to_owned(),
                value_json(&field, &message.get_field(&field)),
            );
        }
    }
    Json::Object(object)
}

fn value_json(field: &FieldDescriptor, value: &Value) -> Json {
    match value {
        Value::Bool(b) => Json::Bool(*b),
        Value::I32(i) => Json::from(*i),
        Value::I64(i) => Json::from(*i),
        Value::U32(u) => Json::from(*u),
        Value::U64(u) => Json::from(*u),
        Value::F32(f) => float_json(f64::from(*f)),
        Value::F64(f) => float_json(*f),
        Value::String(s) => Json::String(s.clone()),
        Value::Bytes(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Json::String(text.to_owned()),
            Err(_) => {
                let mut object = Map::new();
                object.insert(
                    "base64".to_owned(),
                    base64::engine::general_purpose::STANDARD
                        .encode(bytes)
                        .into(),
                );
                Json::Object(object)
            }
        },
        Value::EnumNumber(number) => match field.kind() {
            Kind::Enum(descriptor) => match descriptor.get_value(*number) {
                Some(value) => Json::String(value.name().to_owned()),
                None => Json::from(*number),
            },
            _ => Json::from(*number),
        },
        Value::Message(message) => message_json(message),
        Value::List(items) => {
            Json::Array(items.iter().map(|item| value_json(field, item)).collect())
        }
        Value::Map(map) => {
            let value_field = match field.kind() {
                Kind::Message(entry) => entry.map_entry_value_field(),
                _ => field.clone(),
            };
            let mut entries: Vec<(String, Json)> = map
                .iter()
                .map(|(key, value)| (map_key(key), value_json(&value_field, value)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
    }
}

fn float_json(f: f64) -> Json {
    // JSON has no NaN or infinities: write them as protobuf's JSON mapping does.
    serde_json::Number::from_f64(f).map_or_else(
        || {
            Json::String(
                if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
                .to_owned(),
            )
        },
        Json::Number,
    )
}

fn map_key(key: &MapKey) -> String {
    match key {
        MapKey::Bool(b) => b.to_string(),
        MapKey::I32(i) => i.to_string(),
        MapKey::I64(i) => i.to_string(),
        MapKey::U32(u) => u.to_string(),
        MapKey::U64(u) => u.to_string(),
        MapKey::String(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use opreg_proto::{OpList, TextFormat};

    #[test]
    fn json_uses_proto_names_and_enum_names() {
        let list = OpList::from_pbtxt(
            r#"op {
                 name: "Demo"
                 input_arg { name: "x" type: DT_FLOAT }
                 attr { name: "a" type: "float" default_value { f: nan } }
                 attr { name: "s" type: "string" default_value { s: "\377" } }
                 is_stateful: true
               }"#,
        )
        .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&super::to_json(&list).unwrap()).unwrap();
        let op = &json["op"][0];
        assert_eq!(op["name"], "Demo");
        assert_eq!(op["input_arg"][0]["type"], "DT_FLOAT");
        assert_eq!(op["is_stateful"], true);
        assert_eq!(op["attr"][0]["default_value"]["f"], "NaN");
        assert_eq!(op["attr"][1]["default_value"]["s"]["base64"], "/w==");
        assert!(op.get("description").is_none(), "unset fields are left out");
    }
}
