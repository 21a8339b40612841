//! The documentation's map of the code stays true: every file or folder that
//! `docs/architecture.md` names in backticks exists.

use std::path::Path;

/// The backticked words of `text` that look like paths of the repository (a known top-level
/// folder, then a slash).
fn named_paths(text: &str) -> Vec<&str> {
    const ROOTS: [&str; 9] = [
        "src/",
        "tests/",
        "docs/",
        "benches/",
        "scripts/",
        "proto/",
        "web/",
        "deploy/",
        "examples/",
    ];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| ROOTS.iter().any(|root| word.starts_with(root)))
        .filter(|word| !word.contains(['*', ' ', '<', '{']))
        .collect()
}

#[test]
fn every_path_the_architecture_map_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named = named_paths(&map);
    assert!(named.len() > 50, "the map names the code: {named:?}");
    let missing: Vec<&str> = named
        .into_iter()
        .filter(|path| !root.join(path).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names missing paths: {missing:?}"
    );
}
