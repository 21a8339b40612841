//! The route table of JSON over HTTP, read from the `google.api.http` option of each method
//! in the descriptors the binary embeds (`proto/grundy/v1/grundy.proto`): no route is
//! written by hand, so a route added to the proto is served as soon as the server is built.
//!
//! Path templates (AIP-127): `/` separated literal segments and variables `{field.path}`
//! (one whole segment each), then an optional `:verb`. `*`, `**` and `{var=pattern}` are not
//! used by grundy.proto and refused when the table is built, so a template that needs them
//! fails the server's tests rather than matching wrongly.

use http::Method;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor, Value};

use crate::proto::grundy_service_server::SERVICE_NAME;

/// One HTTP binding of an RPC.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// The HTTP method of the binding.
    pub(crate) method: Method,
    /// The RPC's gRPC path, `/grundy.v1.GrundyService/<Name>`.
    pub(crate) grpc_path: String,
    /// The RPC's name, e.g. `EvaluateBatch`.
    pub(crate) rpc: String,
    /// The request message.
    pub(crate) input: MessageDescriptor,
    /// The response message.
    pub(crate) output: MessageDescriptor,
    /// True for a client-streaming RPC (a JSON array is then a message per element).
    pub(crate) client_streaming: bool,
    /// True for a server-streaming RPC (answered in NDJSON or one array).
    pub(crate) server_streaming: bool,
    /// What the body holds: nothing, the whole request (`*`), or one top-level field.
    pub(crate) body: BodyMapping,
    segments: Vec<Segment>,
    verb: Option<String>,
}

/// The `body` of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyMapping {
    /// No body: the fields not in the path are query parameters.
    None,
    /// `*`: the body is the request, but for the path's fields.
    Whole,
    /// One top-level field of the request.
    Field(String),
}

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    /// A variable: the field path it sets.
    Variable(String),
}

/// What a request's method and path found in the table.
#[derive(Debug)]
pub(crate) enum Lookup<'a> {
    /// A route, with the path's variables (field path, raw segment).
    Found(&'a Route, Vec<(String, String)>),
    /// The path is a route's, but for other methods (listed for `Allow`).
    WrongMethod(Vec<Method>),
    /// No route has this path.
    NotFound,
}

/// Every route of the service, in the order of the proto.
#[derive(Debug, Clone)]
pub(crate) struct RouteTable {
    routes: Vec<Route>,
}

/// Why the descriptors give no route table: a bug of the proto or of the build.
#[derive(Debug, thiserror::Error)]
#[error("JSON routes: {0}")]
pub(crate) struct RouteError(String);

impl RouteTable {
    /// The routes of `grundy.v1.GrundyService` in `pool`.
    pub(crate) fn from_pool(pool: &DescriptorPool) -> Result<Self, RouteError> {
        let service = pool
            .get_service_by_name(SERVICE_NAME)
            .ok_or_else(|| RouteError(format!("no service {SERVICE_NAME}")))?;
        let http = pool
            .get_extension_by_name("google.api.http")
            .ok_or_else(|| RouteError("no google.api.http option in the descriptors".into()))?;
        let mut routes = Vec::new();
        for method in service.methods() {
            let options = method.options();
            if !options.has_extension(&http) {
                continue;
            }
            let Value::Message(rule) = options.get_extension(&http).into_owned() else {
                return Err(RouteError(format!(
                    "{}: option is no HttpRule",
                    method.name()
                )));
            };
            routes.push(route(&method, &rule)?);
            if let Some(Value::List(more)) = rule
                .get_field_by_name("additional_bindings")
                .map(|value| value.into_owned())
            {
                for binding in more {
                    let Value::Message(binding) = binding else {
                        continue;
                    };
                    routes.push(route(&method, &binding)?);
                }
            }
        }
        Ok(Self { routes })
    }

    /// The route of `method` and `path` (the request's path, not yet percent-decoded).
    pub(crate) fn lookup(&self, method: &Method, path: &str) -> Lookup<'_> {
        let mut allowed = Vec::new();
        for route in &self.routes {
            let Some(variables) = route.matches(path) else {
                continue;
            };
            if route.method == *method {
                return Lookup::Found(route, variables);
            }
            allowed.push(route.method.clone());
        }
        if allowed.is_empty() {
            Lookup::NotFound
        } else {
            Lookup::WrongMethod(allowed)
        }
    }

    /// Every route, as `METHOD /template` (for the docs and the tests).
    pub(crate) fn describe(&self) -> Vec<String> {
        self.routes.iter().map(Route::describe).collect()
    }

    /// Every route, in the order of the proto.
    pub(crate) fn routes(&self) -> &[Route] {
        &self.routes
    }
}

impl Route {
    /// The path's variables when `path` matches the template.
    fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let path = path.strip_prefix('/')?;
        let path = match &self.verb {
            Some(verb) => path.strip_suffix(verb.as_str())?.strip_suffix(':')?,
            None => path,
        };
        let mut variables = Vec::new();
        let mut parts = path.split('/');
        for segment in &self.segments {
            let part = parts.next()?;
            match segment {
                Segment::Literal(literal) if literal == part => {}
                Segment::Literal(_) => return None,
                Segment::Variable(_) if part.is_empty() => return None,
                Segment::Variable(field) => variables.push((field.clone(), part.to_string())),
            }
        }
        parts.next().is_none().then_some(variables)
    }

    fn describe(&self) -> String {
        format!("{} {}", self.method, self.template())
    }

    /// The path template, `/v1/graphs/{graph_id}/values`.
    pub(crate) fn template(&self) -> String {
        let mut text = String::new();
        for segment in &self.segments {
            text.push('/');
            match segment {
                Segment::Literal(literal) => text.push_str(literal),
                Segment::Variable(field) => text.push_str(&format!("{{{field}}}")),
            }
        }
        if let Some(verb) = &self.verb {
            text.push_str(&format!(":{verb}"));
        }
        text
    }

    /// The field paths the path's variables set.
    pub(crate) fn path_fields(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|segment| match segment {
            Segment::Variable(field) => Some(field.as_str()),
            Segment::Literal(_) => None,
        })
    }
}

/// The route of one `HttpRule` of `method`.
fn route(method: &MethodDescriptor, rule: &DynamicMessage) -> Result<Route, RouteError> {
    let text = |name: &str| match rule.get_field_by_name(name).as_deref() {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    let bad = |what: String| RouteError(format!("{}: {what}", method.name()));
    let (http_method, template) = [
        ("get", Method::GET),
        ("put", Method::PUT),
        ("post", Method::POST),
        ("delete", Method::DELETE),
        ("patch", Method::PATCH),
    ]
    .into_iter()
    .find_map(|(name, http_method)| text(name).map(|template| (http_method, template)))
    .ok_or_else(|| bad("a rule without get, put, post, delete or patch".into()))?;
    let (segments, verb) =
        parse_template(&template).map_err(|why| bad(format!("{template}: {why}")))?;
    let body = match text("body").as_deref() {
        None => BodyMapping::None,
        Some("*") => BodyMapping::Whole,
        Some(field) => BodyMapping::Field(field.to_string()),
    };
    Ok(Route {
        method: http_method,
        grpc_path: format!("/{}/{}", SERVICE_NAME, method.name()),
        rpc: method.name().to_string(),
        input: method.input(),
        output: method.output(),
        client_streaming: method.is_client_streaming(),
        server_streaming: method.is_server_streaming(),
        body,
        segments,
        verb,
    })
}

/// The segments and verb of a template such as `/v1/graphs/{graph_id}:evaluate`.
fn parse_template(template: &str) -> Result<(Vec<Segment>, Option<String>), &'static str> {
    let path = template.strip_prefix('/').ok_or("does not start with /")?;
    // The verb follows the last segment's last ':' outside a variable.
    let (path, verb) = match path.rfind(':') {
        Some(colon) if !path[colon..].contains('}') && !path[colon..].contains('/') => {
            (&path[..colon], Some(path[colon + 1..].to_string()))
        }
        _ => (path, None),
    };
    let segments = path
        .split('/')
        .map(|segment| match segment.strip_prefix('{') {
            Some(variable) => {
                let field = variable.strip_suffix('}').ok_or("unclosed variable")?;
                if field.contains('=') || field.is_empty() {
                    return Err("variables with a pattern are not supported");
                }
                Ok(Segment::Variable(field.to_string()))
            }
            None if segment.contains('*') => Err("wildcards are not supported"),
            None if segment.is_empty() => Err("empty segment"),
            None => Ok(Segment::Literal(segment.to_string())),
        })
        .collect::<Result<_, _>>()?;
    Ok((segments, verb))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RouteTable {
        let pool = DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        RouteTable::from_pool(&pool).unwrap()
    }

    #[test]
    fn the_routes_are_those_of_the_proto() {
        assert_eq!(
            table().describe(),
            [
                "POST /v1:evaluate",
                "POST /v1/graphs/{start.graph_id}:evaluate",
                "POST /v1/graphs",
                "GET /v1/graphs/{graph_id}/values",
            ]
        );
    }

    #[test]
    fn paths_match_with_their_variables_and_verbs() {
        let table = table();
        let found = |method: Method, path: &str| match table.lookup(&method, path) {
            Lookup::Found(route, variables) => Some((route.rpc.clone(), variables)),
            _ => None,
        };
        assert_eq!(
            found(Method::POST, "/v1:evaluate").unwrap().0,
            "EvaluateBatch"
        );
        let (rpc, variables) = found(Method::POST, "/v1/graphs/ab12:evaluate").unwrap();
        assert_eq!(rpc, "EvaluateBatch");
        assert_eq!(
            variables,
            [("start.graph_id".to_string(), "ab12".to_string())]
        );
        let (rpc, variables) = found(Method::GET, "/v1/graphs/ab12/values").unwrap();
        assert_eq!(rpc, "GetValues");
        assert_eq!(variables, [("graph_id".to_string(), "ab12".to_string())]);
        assert_eq!(found(Method::POST, "/v1/graphs").unwrap().0, "PutGraph");
        for path in [
            "/v1/graphs/:evaluate",
            "/v1/graphs//values",
            "/v1/graphs/a/b/values",
            "/v1",
        ] {
            assert!(found(Method::GET, path).is_none(), "{path}");
            assert!(found(Method::POST, path).is_none(), "{path}");
        }
        assert!(matches!(
            table.lookup(&Method::GET, "/v1/graphs"),
            Lookup::WrongMethod(methods) if methods == [Method::POST]
        ));
        assert!(matches!(
            table.lookup(&Method::GET, "/v2/x"),
            Lookup::NotFound
        ));
    }
}
