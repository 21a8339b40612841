//! The page's files, compiled into the binary: the HTML, the style sheet, the JavaScript
//! modules (the gRPC-Web client among them) and the favicon.

use bytes::Bytes;
use http::{Response, StatusCode};
use tonic::body::Body;

use super::responses::response;

/// A file of the page: path, content type, content.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

/// The JavaScript modules' content type (`index.html` loads `app.js` as a module, which
/// imports the others by relative path).
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

const fn script(path: &'static str, body: &'static str) -> Asset {
    Asset {
        path,
        content_type: JAVASCRIPT,
        body,
    }
}

/// The page's files: plain JavaScript modules and one bundle built from proto/ and pinned npm
/// packages (`web/vendor/grundy-rpc.js`, checked in); nothing fetched from elsewhere.
const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("../../../web/index.html"),
    },
    Asset {
        path: "/style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../../../web/style.css"),
    },
    // the controls wired, the state committed
    script("/app.js", include_str!("../../../web/app.js")),
    // what each control does: steps that ask and then commit
    script("/actions.js", include_str!("../../../web/actions.js")),
    // one step at a time: progress, Cancel, the time limit, the error line
    script("/activity.js", include_str!("../../../web/activity.js")),
    // the value chart of the line shown
    script("/chart.js", include_str!("../../../web/chart.js")),
    // a game as a file or a link
    script("/share.js", include_str!("../../../web/share.js")),
    // the server as an opponent, perfect or erring
    script("/opponent.js", include_str!("../../../web/opponent.js")),
    // the session and its history (pure)
    script("/session.js", include_str!("../../../web/session.js")),
    // the games' moves (pure)
    script("/rules.js", include_str!("../../../web/rules.js")),
    // the requests to the server
    script("/server.js", include_str!("../../../web/server.js")),
    // the gRPC-Web client: grundy.v1 messages generated from proto/ and Connect's transport,
    // bundled by scripts/web-bundle.sh
    script(
        "/vendor/grundy-rpc.js",
        include_str!("../../../web/vendor/grundy-rpc.js"),
    ),
    // the verdict, moves, history and status
    script("/panels.js", include_str!("../../../web/panels.js")),
    // the render request and the board's glue
    script("/board-view.js", include_str!("../../../web/board-view.js")),
    // the board's zoom, pan and keyboard
    script("/board.js", include_str!("../../../web/board.js")),
    // the loader and builder panel
    script("/loader.js", include_str!("../../../web/loader.js")),
    // the judge formats
    script("/judge.js", include_str!("../../../web/judge.js")),
    // Browsers ask for /favicon.ico whatever the page links; both answer the same icon.
    Asset {
        path: "/favicon.svg",
        content_type: "image/svg+xml",
        body: include_str!("../../../web/favicon.svg"),
    },
    Asset {
        path: "/favicon.ico",
        content_type: "image/svg+xml",
        body: include_str!("../../../web/favicon.svg"),
    },
];

/// The response for a `GET` of `path`, if it names one of the page's files.
pub(super) fn lookup(path: &str) -> Option<Response<Body>> {
    ASSETS
        .iter()
        .find(|asset| asset.path == path)
        .map(asset_response)
}

fn asset_response(asset: &Asset) -> Response<Body> {
    response(
        StatusCode::OK,
        asset.content_type,
        Bytes::from_static(asset.body.as_bytes()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module imported but not served fails the whole page in the browser, so every
    /// relative import of a served script must be served too, and every file of `web/` listed.
    #[test]
    fn every_file_of_the_page_and_every_import_is_served() {
        let served = |path: &str| ASSETS.iter().any(|asset| asset.path == path);
        for asset in ASSETS
            .iter()
            .filter(|asset| asset.content_type == JAVASCRIPT)
        {
            for import in asset.body.split("from \"./").skip(1) {
                let target = import.split('"').next().unwrap_or_default();
                assert!(
                    served(&format!("/{target}")),
                    "{} imports ./{target}",
                    asset.path
                );
            }
        }
        let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut folders = vec![web.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                    continue;
                }
                let name = path
                    .strip_prefix(&web)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                let served_as = if name == "index.html" {
                    "/".to_string()
                } else {
                    format!("/{name}")
                };
                assert!(served(&served_as), "web/{name} is not served");
            }
        }
    }
}
