//! The OpenAPI 3.1 document of JSON over HTTP, made from the descriptors the binary embeds:
//! the routes of the `google.api.http` options ([`RouteTable`]), the messages they carry as
//! JSON Schemas in the proto3 JSON mapping, and the proto's comments as descriptions. Served
//! at [`PATH`]; `docs/openapi.json` is the same document, and a test fails when the two part
//! (`GRUNDY_BLESS=1` rewrites the file), so the document can never drift from the proto.
//!
//! The one route not in the proto, the picture of a position (`super::picture`), is added
//! from that module's own description of its parameters.

use std::collections::{BTreeMap, HashMap, VecDeque};

use prost_reflect::{
    DescriptorPool, EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor,
};
use serde_json::{Map, Value, json};

use super::picture;
use super::routes::{BodyMapping, Route, RouteTable};
use crate::proto::grundy_service_server::SERVICE_NAME;

/// Where the document is served.
pub(crate) const PATH: &str = "/v1/openapi.json";

/// The `google.rpc.Status` of every error, and the details it carries.
const ERROR_MESSAGES: [&str; 5] = [
    "google.rpc.Status",
    "google.rpc.ErrorInfo",
    "google.rpc.BadRequest",
    "google.rpc.QuotaFailure",
    "google.rpc.RetryInfo",
];

/// The document, pretty-printed, ending with a newline.
pub(crate) fn document_text(pool: &DescriptorPool, routes: &RouteTable) -> String {
    let document = document(pool, routes);
    let mut text = serde_json::to_string_pretty(&document).unwrap_or_default();
    text.push('\n');
    text
}

/// The document (see the module documentation).
fn document(pool: &DescriptorPool, routes: &RouteTable) -> Value {
    let comments = Comments::read(pool);
    let service = pool.get_service_by_name(SERVICE_NAME);
    let mut schemas = Schemas::new(&comments);
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for route in routes.routes() {
        let method = service
            .as_ref()
            .and_then(|service| service.methods().find(|m| m.name() == route.rpc));
        let count = seen.entry(route.rpc.clone()).or_default();
        *count += 1;
        let id = match *count {
            1 => route.rpc.clone(),
            n => format!("{}{n}", route.rpc),
        };
        let operation = operation(route, method.as_ref(), &id, &comments, &mut schemas);
        paths
            .entry(route.template())
            .or_default()
            .insert(route.method.as_str().to_ascii_lowercase(), operation);
    }
    paths
        .entry(picture::OPENAPI_PATH.to_string())
        .or_default()
        .insert("get".into(), picture::openapi_operation());
    for name in ERROR_MESSAGES {
        if let Some(message) = pool.get_message_by_name(name) {
            schemas.reference(&message);
        }
    }
    let description = service
        .as_ref()
        .and_then(|service| comments.of(service.parent_file().name(), service.path()));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "grundy JSON over HTTP",
            "version": env!("CARGO_PKG_VERSION"),
            "description": description.unwrap_or_default(),
        },
        "paths": paths,
        "components": {"schemas": schemas.finish()},
    })
}

/// The operation of one route.
fn operation(
    route: &Route,
    method: Option<&MethodDescriptor>,
    id: &str,
    comments: &Comments,
    schemas: &mut Schemas,
) -> Value {
    let mut parameters = Vec::new();
    let in_path: Vec<&str> = route.path_fields().collect();
    for field in &in_path {
        let schema = field_by_path(&route.input, field)
            .map(|field| schemas.field(&field))
            .unwrap_or_else(|| json!({"type": "string"}));
        parameters.push(json!({"name": field, "in": "path", "required": true, "schema": schema}));
    }
    if route.body == BodyMapping::None {
        for field in route.input.fields() {
            if in_path.contains(&field.name()) || field.is_list() || field.is_map() {
                continue;
            }
            let schema = schemas.field(&field);
            parameters.push(json!({"name": field.name(), "in": "query", "schema": schema}));
        }
    }
    parameters.push(json!({
        "name": "timeout",
        "in": "query",
        "description": "The call's deadline as a google.protobuf.Duration in JSON (`2.5s`); \
                        replaces a `grpc-timeout` header.",
        "schema": {"type": "string", "format": "duration"},
    }));
    let mut operation = json!({
        "operationId": id,
        "summary": format!("{} ({})", route.rpc, if route.server_streaming { "a stream of answers" } else { "one answer" }),
        "parameters": parameters,
        "responses": {
            "200": responses(route, schemas),
            "default": {
                "description": "The call's google.rpc.Status, its HTTP status by code (docs/api.md).",
                "content": {"application/json": {"schema": reference("google.rpc.Status")}},
            },
        },
    });
    if let Some(text) = method.and_then(|m| comments.of(m.parent_file().name(), m.path())) {
        operation["description"] = text.into();
    }
    let body = match &route.body {
        BodyMapping::None => None,
        BodyMapping::Whole => Some(schemas.reference(&route.input)),
        BodyMapping::Field(name) => route
            .input
            .get_field_by_name(name)
            .map(|f| schemas.field(&f)),
    };
    if let Some(mut schema) = body {
        if route.client_streaming {
            schema = json!({"oneOf": [schema.clone(), {"type": "array", "items": schema}]});
        }
        operation["requestBody"] = json!({
            "required": true,
            "description": if route.client_streaming {
                "One message, or a JSON array of them sent in order."
            } else {
                "The request; fields bound in the path are taken from there."
            },
            "content": {"application/json": {"schema": schema}},
        });
    }
    operation
}

/// The successful answer of a route: one message, or a stream as an array or NDJSON.
fn responses(route: &Route, schemas: &mut Schemas) -> Value {
    let output = schemas.reference(&route.output);
    if !route.server_streaming {
        return json!({"description": "The answer.", "content": {"application/json": {"schema": output}}});
    }
    json!({
        "description": "The stream's messages: one JSON array, or with `Accept: \
                        application/x-ndjson` one message per line, each sent as it is \
                        produced; an error after the first line is a last line \
                        `{\"error\": <google.rpc.Status>}`.",
        "content": {
            "application/json": {"schema": {"type": "array", "items": output.clone()}},
            "application/x-ndjson": {"schema": output},
        },
    })
}

/// The field of `message` at a dotted path (`start.graph_id`).
fn field_by_path(message: &MessageDescriptor, path: &str) -> Option<FieldDescriptor> {
    let mut message = message.clone();
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let field = message.get_field_by_name(part)?;
        if parts.peek().is_none() {
            return Some(field);
        }
        message = field.kind().as_message()?.clone();
    }
    None
}

/// A reference to the schema of the message or enum named `name`.
fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The schemas of the messages and enums referenced so far, made on demand.
struct Schemas<'a> {
    comments: &'a Comments,
    done: BTreeMap<String, Value>,
    to_do: VecDeque<Kind>,
}

impl<'a> Schemas<'a> {
    fn new(comments: &'a Comments) -> Self {
        Self {
            comments,
            done: BTreeMap::new(),
            to_do: VecDeque::new(),
        }
    }

    /// A reference to `message`'s schema (made by [`Self::finish`]).
    fn reference(&mut self, message: &MessageDescriptor) -> Value {
        if let Some(schema) = well_known(message.full_name()) {
            return schema;
        }
        self.to_do.push_back(Kind::Message(message.clone()));
        reference(message.full_name())
    }

    /// The schema of a field's value (an array of them when repeated).
    fn field(&mut self, field: &FieldDescriptor) -> Value {
        let value = self.kind(&field.kind());
        let mut schema = if field.is_map() {
            let value_kind = field
                .kind()
                .as_message()
                .map(|entry| entry.map_entry_value_field().kind());
            let value = value_kind.map_or(json!({}), |kind| self.kind(&kind));
            json!({"type": "object", "additionalProperties": value})
        } else if field.is_list() {
            json!({"type": "array", "items": value})
        } else {
            value
        };
        if let Some(text) = self.comments.of_field(field) {
            schema["description"] = text.into();
        }
        schema
    }

    /// The schema of one value of `kind` in the proto3 JSON mapping.
    fn kind(&mut self, kind: &Kind) -> Value {
        match kind {
            Kind::Double | Kind::Float => json!({"type": "number"}),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                json!({"type": "integer", "format": "int32"})
            }
            Kind::Uint32 | Kind::Fixed32 => {
                json!({"type": "integer", "format": "int32", "minimum": 0})
            }
            // The mapping writes 64-bit integers as strings (and reads numbers too).
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
                json!({"type": "string", "format": "int64"})
            }
            Kind::Uint64 | Kind::Fixed64 => json!({"type": "string", "format": "uint64"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::String => json!({"type": "string"}),
            Kind::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
            Kind::Message(message) => self.reference(message),
            Kind::Enum(enumeration) => {
                self.to_do.push_back(kind.clone());
                reference(enumeration.full_name())
            }
        }
    }

    /// Every schema referenced, by full name.
    fn finish(mut self) -> BTreeMap<String, Value> {
        while let Some(kind) = self.to_do.pop_front() {
            let name = match &kind {
                Kind::Message(message) => message.full_name().to_string(),
                Kind::Enum(enumeration) => enumeration.full_name().to_string(),
                _ => continue,
            };
            if self.done.contains_key(&name) {
                continue;
            }
            // A placeholder first: a message that contains itself is made once.
            self.done.insert(name.clone(), Value::Null);
            let schema = match &kind {
                Kind::Message(message) => self.message(message),
                Kind::Enum(enumeration) => self.enumeration(enumeration),
                _ => continue,
            };
            self.done.insert(name, schema);
        }
        self.done
    }

    fn message(&mut self, message: &MessageDescriptor) -> Value {
        let mut properties = Map::new();
        for field in message.fields() {
            let mut schema = self.field(&field);
            if let Some(oneof) = field.containing_oneof().filter(|o| !o.is_synthetic()) {
                schema["x-oneof"] = oneof.name().into();
            }
            properties.insert(field.json_name().to_string(), schema);
        }
        let mut schema =
            json!({"type": "object", "properties": properties, "additionalProperties": false});
        if let Some(text) = self
            .comments
            .of(message.parent_file().name(), message.path())
        {
            schema["description"] = text.into();
        }
        schema
    }

    fn enumeration(&self, enumeration: &EnumDescriptor) -> Value {
        let names: Vec<String> = enumeration
            .values()
            .map(|value| value.name().to_string())
            .collect();
        let mut schema = json!({"type": "string", "enum": names});
        if let Some(text) = self
            .comments
            .of(enumeration.parent_file().name(), enumeration.path())
        {
            schema["description"] = text.into();
        }
        schema
    }
}

/// The schemas of the well-known types in the proto3 JSON mapping.
fn well_known(name: &str) -> Option<Value> {
    Some(match name {
        "google.protobuf.Duration" => json!({"type": "string", "format": "duration"}),
        "google.protobuf.Timestamp" => json!({"type": "string", "format": "date-time"}),
        "google.protobuf.Any" => json!({
            "type": "object",
            "properties": {"@type": {"type": "string"}},
            "required": ["@type"],
            "additionalProperties": true,
        }),
        "google.protobuf.Empty" => json!({"type": "object"}),
        _ => return None,
    })
}

/// The leading comments of the proto files, by file and source path.
struct Comments {
    by_file: HashMap<String, HashMap<Vec<i32>, String>>,
}

impl Comments {
    fn read(pool: &DescriptorPool) -> Self {
        let by_file = pool
            .files()
            .map(|file| {
                let locations = file
                    .file_descriptor_proto()
                    .source_code_info
                    .iter()
                    .flat_map(|info| &info.location)
                    .filter_map(|location| {
                        let text = location.leading_comments.as_deref()?.trim();
                        let lines: Vec<&str> = text.lines().map(str::trim).collect();
                        Some((location.path.clone(), lines.join("\n")))
                    })
                    .collect();
                (file.name().to_string(), locations)
            })
            .collect();
        Self { by_file }
    }

    fn of(&self, file: &str, path: &[i32]) -> Option<String> {
        self.by_file.get(file)?.get(path).cloned()
    }

    fn of_field(&self, field: &FieldDescriptor) -> Option<String> {
        self.of(field.parent_file().name(), field.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto;

    fn text() -> String {
        let pool = DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).unwrap();
        let routes = RouteTable::from_pool(&pool).unwrap();
        document_text(&pool, &routes)
    }

    #[test]
    fn the_document_in_docs_is_the_one_the_proto_gives() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json");
        let made = text();
        if std::env::var_os("GRUNDY_BLESS").is_some() {
            std::fs::write(path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            kept == made,
            "docs/openapi.json is not the document the proto gives: run \
             GRUNDY_BLESS=1 cargo test --lib openapi, and review the diff"
        );
    }

    #[test]
    fn every_route_and_every_referenced_schema_is_there() {
        let document: Value = serde_json::from_str(&text()).unwrap();
        let paths = document["paths"].as_object().unwrap();
        for (path, method) in [
            ("/v1:evaluate", "post"),
            ("/v1/graphs/{start.graph_id}:evaluate", "post"),
            ("/v1/graphs", "post"),
            ("/v1/graphs/{graph_id}/values", "get"),
            ("/v1/graphs/{graph_id}/picture.svg", "get"),
        ] {
            assert!(paths[path][method].is_object(), "{path} {method}");
        }
        let text = document.to_string();
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for reference in text.split("\"#/components/schemas/").skip(1) {
            let name = &reference[..reference.find('"').unwrap()];
            assert!(
                schemas.contains_key(name),
                "{name} is referenced but not defined"
            );
        }
        // 64-bit integers are strings, as the proto3 JSON mapping writes them.
        let verdict = &schemas["grundy.v1.Verdict"]["properties"]["nimSum"];
        assert!(verdict.to_string().contains("\"uint64\""), "{verdict}");
    }
}
