//! The library's house rules (lib.rs, "Imports go one way"): every module
//! imports only modules of earlier layers (or its own top-level module),
//! and no two files import each other, directly or through others.
//! Test code (the items under `#[cfg(test)]`, and `tests.rs` files),
//! comments and literals are not counted. The graph itself is printed by
//! `cargo run -p memplan --example module_graph`.

use std::collections::{BTreeMap, BTreeSet};

#[path = "layers/graph.rs"]
mod graph;

use graph::{import_graph, imports, layer};

#[test]
fn imports_go_down_the_layers_without_cycles() {
    let (graph, upward) = import_graph();
    assert!(
        upward.is_empty(),
        "imports up or across the layers:\n{}",
        upward.join("\n")
    );

    // No cycle between files (a child naming its parent counts too): a
    // depth-first search over the graph.
    fn visit(
        m: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == m).unwrap_or(0);
                return Some(stack[at..].to_vec());
            }
            _ => {}
        }
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            if next == m {
                continue;
            }
            if let Some(cycle) = visit(next, graph, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(m, &graph, &mut state, &mut stack) {
            let names: Vec<String> = cycle.iter().map(|c| c.join("::")).collect();
            panic!("import cycle: {}", names.join(" -> "));
        }
    }
}

/// The rule can fail: a file naming a module of a later layer is caught.
#[test]
fn an_upward_import_is_seen() {
    let modules: BTreeSet<Vec<String>> = [vec!["geometry".to_string()], vec!["pools".to_string()]]
        .into_iter()
        .collect();
    let text = "use crate::pools::Pool; // crate::problem\n#[cfg(test)]\nuse crate::geometry;";
    let found = imports(text, &[], &modules);
    assert_eq!(found, [vec!["pools".to_string()]].into_iter().collect());
    assert!(layer("pools") > layer("geometry"));
}

fn names(list: &[&str]) -> BTreeSet<Vec<String>> {
    list.iter()
        .map(|m| m.split("::").map(String::from).collect())
        .collect()
}

/// Production code after an indented `#[cfg(test)]` item (a statement, a
/// function) is read: an upward import there is caught.
#[test]
fn an_upward_import_after_an_indented_test_item_is_seen() {
    let modules = names(&["geometry", "pools", "problem"]);
    let text = r#"
impl Placer {
    fn place(&self) {
        #[cfg(test)]
        COUNT.fetch_add(1, crate::geometry::ORDER);
        let batch = crate::pools::Pool::new();
    }

    #[cfg(test)]
    pub(super) fn new(p: &Problem) -> Vec<u8> {
        let s = "}"; let c = '}'; // }
        crate::geometry::fit(p, c, s)
    }

    fn after(&self) -> crate::problem::Problem {}
}
"#;
    let found = imports(text, &["solvers".into(), "greedy".into()], &modules);
    assert_eq!(found, names(&["pools", "problem"]));
    assert!(layer("pools") > layer("solvers::greedy"));
}

/// Imports inside a `#[cfg(test)] mod tests { ... }` are not counted (nor
/// those in comments and literals), while the code after the module is.
#[test]
fn imports_in_a_test_module_are_not_counted() {
    let modules = names(&["geometry", "pools", "problem", "solvers::greedy"]);
    let text = r##"
use crate::geometry::fit; // use crate::pools
/* crate::pools /* nested */ crate::pools */
const DOC: &str = "crate::pools";
const RAW: &str = r#"crate::pools " {"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pools::Pool;
    use crate::solvers::greedy::{Greedy, Order};

    fn helper<'a>(s: &'a str) -> char {
        let _ = ("{", '{', r"{");
        crate::pools::fill(s);
        '\''
    }
}

fn last() -> crate::problem::Problem {}
"##;
    let found = imports(text, &[], &modules);
    assert_eq!(found, names(&["geometry", "problem"]));
}
