use std::collections::BTreeSet;

use proptest::prelude::*;

use super::super::order::successors_first_order;
use super::super::sliding::grundy_table;
use super::methods::{enumeration_cost, vertex_value};
use super::*;

fn graph(n: u32, edges: &[(u32, u32)]) -> Digraph {
    Digraph::from_edges(n, edges).unwrap()
}

fn table(g: &Digraph, split_counts: &[u32]) -> Result<SplitTable, SplitError> {
    let order = successors_first_order(g).unwrap();
    split_grundy_table(g, split_counts, &order, &SplitLimits::default())
}

/// The options of one unit by brute force over every subset of the successor values as
/// given (equal values not merged).
fn naive_options(raw: &[u64], k: u32) -> BTreeSet<u64> {
    (0u32..1 << raw.len())
        .filter(|mask| mask.count_ones() <= k && mask.count_ones() % 2 == k % 2)
        .map(|mask| {
            (0..raw.len())
                .filter(|&i| mask >> i & 1 == 1)
                .fold(0, |xor, i| xor ^ raw[i])
        })
        .collect()
}

fn mex(options: &BTreeSet<u64>) -> u64 {
    (0..).find(|x| !options.contains(x)).unwrap()
}

/// The distinct values as the table sees them, `raw[i]` being the value of successor `i`.
fn distinct_values(raw: &[u64]) -> Vec<u64> {
    let successors: Vec<u32> = (0..raw.len() as u32).collect();
    let mut candidates = Candidates::default();
    candidates.collect(&successors, raw);
    candidates.values
}

/// Every method that is exact for these distinct values.
fn applicable(values: &[u64], k: u32) -> Vec<Method> {
    if values.is_empty() {
        return vec![Method::Terminal];
    }
    let mut methods = vec![Method::Enumerate, Method::ParityDp];
    if k as usize + 1 >= values.len() {
        methods.push(Method::Span);
    }
    methods
}

/// `set` (indices into `values`) is a legal move of one unit with value `target`.
fn assert_option_set(values: &[u64], k: u32, target: u64, set: &[usize]) {
    let unique: BTreeSet<usize> = set.iter().copied().collect();
    assert_eq!(unique.len(), set.len(), "a value is used twice in {set:?}");
    assert!(set.len() <= k as usize, "{} values for K {k}", set.len());
    assert_eq!(
        set.len() % 2,
        k as usize % 2,
        "{} values for K {k}",
        set.len()
    );
    assert_eq!(set.iter().fold(0, |xor, &i| xor ^ values[i]), target);
}

/// `picks` is a legal move of one unit at `vertex` to the value `target`.
fn assert_picks(g: &Digraph, k: u32, values: &[u64], vertex: u32, target: u64, picks: &SplitPicks) {
    let successors = g.successors(vertex);
    let odd = &picks.odd_targets;
    assert!(odd.windows(2).all(|w| w[0] < w[1]), "{odd:?} not ascending");
    assert!(odd.iter().all(|w| successors.contains(w)), "{odd:?}");
    assert_eq!(odd.len() as u32 + 2 * picks.pair_count, k);
    assert_eq!(picks.pair_target.is_some(), picks.pair_count > 0);
    assert!(picks.pair_target.is_none_or(|w| successors.contains(&w)));
    assert_eq!(
        odd.iter().fold(0, |xor, &w| xor ^ values[w as usize]),
        target
    );
}

/// Deterministic pseudo-random values (splitmix64).
fn pseudo_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Vertices 0..=64: vertex 0 is terminal, vertex `i > 0` has successors `0..i` and K = 64,
/// so its even sets span all values below 2^(i-1) and `g(i) = 2^(i-1)`.
fn power_chain_edges() -> Vec<(u32, u32)> {
    (1..=64).flat_map(|i| (0..i).map(move |w| (i, w))).collect()
}

/// An acyclic graph on `1..max_n` vertices, duplicate edges allowed.
fn dag(max_n: u32, max_edges: usize) -> impl Strategy<Value = (u32, Vec<(u32, u32)>)> {
    (1..max_n)
        .prop_flat_map(move |n| (Just(n), prop::collection::vec((0..n, 0..n), 0..max_edges)))
        .prop_map(|(n, pairs)| {
            let edges = pairs
                .into_iter()
                .filter(|&(a, b)| a != b)
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            (n, edges)
        })
}

#[test]
fn worked_example() {
    // docs/games.md section 2: edges 0->1, 0->2, 1->3, 2->1, 2->3, K = {2, 1, 3, 2}.
    let g = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 1), (2, 3)]);
    let ks = [2, 1, 3, 2];
    let t = table(&g, &ks).unwrap();
    assert_eq!(t.values, vec![1, 1, 2, 0]);
    assert_eq!(t.methods[3], Method::Terminal);
    let nim_sum = |position: [u64; 4]| {
        (0..4)
            .filter(|&v| position[v] % 2 == 1)
            .fold(0, |xor, v| xor ^ t.values[v])
    };
    assert_ne!(nim_sum([3, 4, 5, 6]), 0, "WINNING");
    assert_eq!(nim_sum([0, 0, 0, 5]), 0, "LOSING");
    assert_ne!(nim_sum([1, 0, 0, 0]), 0, "WINNING");

    // From {3,4,5,6} (nim-sum 3), the unit at vertex 2 (value 2) goes to value 1: one unit
    // to vertex 1 and a pair to vertex 1, giving {3,7,4,6}, one of the listed moves.
    let picks = find_split_picks(&g, &ks, &t, 2, 1).unwrap();
    let expected = SplitPicks {
        odd_targets: vec![1],
        pair_target: Some(1),
        pair_count: 1,
    };
    assert_eq!(picks, expected);
    assert_eq!(nim_sum([3, 7, 4, 6]), 0);
    // Vertex 0 (K = 2) moves to {} or {1, 2}: options 0 and 3 only.
    let both = find_split_picks(&g, &ks, &t, 0, 3).unwrap();
    assert_eq!(both.odd_targets, vec![1, 2]);
    assert_eq!((both.pair_target, both.pair_count), (None, 0));
    assert_eq!(find_split_picks(&g, &ks, &t, 0, 2), None);
    assert_eq!(find_split_picks(&g, &ks, &t, 3, 0), None, "terminal");
    assert_eq!(find_split_picks(&g, &ks, &t, 4, 0), None, "out of range");
}

proptest! {
    #[test]
    fn methods_agree_with_brute_force(
        raw in prop::collection::vec(prop_oneof![3 => 0u64..8, 1 => any::<u64>()], 0..11),
        k in 0u32..13,
        stranger in any::<u64>(),
    ) {
        let options = naive_options(&raw, k);
        let expected = if raw.is_empty() { 0 } else { mex(&options) };
        let values = distinct_values(&raw);
        let chosen = choose_method(&values, k, u64::MAX).unwrap();
        prop_assert!(applicable(&values, k).contains(&chosen));
        for method in applicable(&values, k) {
            prop_assert_eq!(vertex_value(&values, k, method), Some(expected), "{:?}", method);
            let is_option = |x: &u64| method != Method::Terminal && options.contains(x);
            for target in options.iter().copied().chain(0..=expected + 1).chain([stranger]) {
                match option_subset(&values, k, method, target) {
                    Some(set) => {
                        prop_assert!(is_option(&target), "{:?} found non-option {}", method, target);
                        assert_option_set(&values, k, target, &set);
                    }
                    None => prop_assert!(!is_option(&target), "{:?} missed {}", method, target),
                }
            }
        }
    }

    #[test]
    fn split_count_one_is_token_sliding((n, edges) in dag(40, 120)) {
        let g = graph(n, &edges);
        let order = successors_first_order(&g).unwrap();
        let t = table(&g, &vec![1; n as usize]).unwrap();
        prop_assert_eq!(t.values, grundy_table(&g, &order));
    }

    #[test]
    fn picks_realise_every_option((n, edges) in dag(12, 40), seed in any::<u64>()) {
        let g = graph(n, &edges);
        let mut state = seed;
        let ks: Vec<u32> = (0..n).map(|_| (pseudo_random(&mut state) % 7) as u32).collect();
        let t = table(&g, &ks).unwrap();
        for vertex in 0..n {
            let k = ks[vertex as usize];
            let mut successors = g.successors(vertex).to_vec();
            successors.sort_unstable();
            successors.dedup();
            let raw: Vec<u64> = successors.iter().map(|&w| t.values[w as usize]).collect();
            let options = if raw.is_empty() { BTreeSet::new() } else { naive_options(&raw, k) };
            let value = t.values[vertex as usize];
            prop_assert_eq!(value, if raw.is_empty() { 0 } else { mex(&options) });
            for target in options.iter().copied().chain(0..=value + 1) {
                match find_split_picks(&g, &ks, &t, vertex, target) {
                    Some(picks) => {
                        prop_assert!(options.contains(&target), "non-option {} at {}", target, vertex);
                        assert_picks(&g, k, &t.values, vertex, target, &picks);
                    }
                    None => prop_assert!(!options.contains(&target), "missed {} at {}", target, vertex),
                }
            }
        }
    }
}

#[test]
fn span_with_5000_successors() {
    let all: Vec<u64> = (0..5000).collect();
    let even: Vec<u64> = (0..5000).map(|i| 2 * i).collect();
    let odd: Vec<u64> = (0..5000).map(|i| 2 * i + 1).collect();
    let cases = [
        // 0 is a value, so odd sets reach 0 too; the even sets span all of 0..2^13.
        (&all, 4999, 8192),
        (&all, 5000, 8192),
        // Only even values: bit 0 leads no row.
        (&even, 5001, 1),
        // An odd number of odd values xors to an odd value, never 0.
        (&odd, 4999, 0),
        (&odd, 5000, 1),
    ];
    for (values, k, expected) in cases {
        assert_eq!(choose_method(values, k, 0), Ok(Method::Span));
        assert_eq!(
            vertex_value(values, k, Method::Span),
            Some(expected),
            "K {k}"
        );
        let below = expected
            .checked_sub(1)
            .map(|v| option_subset(values, k, Method::Span, v));
        if let Some(set) = below {
            assert_option_set(values, k, expected - 1, &set.unwrap());
        }
        assert_eq!(option_subset(values, k, Method::Span, expected), None);
    }
}

#[test]
fn sixty_successors_with_split_count_three() {
    let mut state = 7;
    // A few small values so the mex is not trivially 0; the rest are wide and independent.
    let wide: Vec<u64> = (0..60)
        .map(|i| if i < 6 { i } else { pseudo_random(&mut state) })
        .collect();
    let narrow: Vec<u64> = (0..60).map(|_| pseudo_random(&mut state) % 32).collect();
    for (raw, method) in [(wide, Method::Enumerate), (narrow, Method::ParityDp)] {
        let mut options = BTreeSet::new();
        for i in 0..60 {
            options.insert(raw[i]);
            for j in i + 1..60 {
                for l in j + 1..60 {
                    options.insert(raw[i] ^ raw[j] ^ raw[l]);
                }
            }
        }
        let values = distinct_values(&raw);
        assert_eq!(
            choose_method(&values, 3, DEFAULT_WORK_BUDGET_PER_VERTEX),
            Ok(method)
        );
        assert_eq!(
            vertex_value(&values, 3, method),
            Some(mex(&options)),
            "{method:?}"
        );
        for &target in options.iter().take(300) {
            let set = option_subset(&values, 3, method, target).unwrap();
            assert_option_set(&values, 3, target, &set);
        }
    }
}

#[test]
fn parity_dp_handles_many_narrow_values() {
    // A staircase: vertex i < 40 has successors 0..i and K = 1, so g(i) = i. Vertex 40 sees
    // the values 0..40 with K = 20: enumeration needs about 2^39 steps, the DP 40 * 2^7.
    // Vertex 41 sees 0..20 with K = 3: 1351 sets against 20 * 2^6 DP updates.
    // Both reach every x < 64 (resp. 32): x itself, or the xor of two (three) values.
    let mut edges: Vec<(u32, u32)> = (0..40).flat_map(|i| (0..i).map(move |w| (i, w))).collect();
    edges.extend((0..40).map(|w| (40, w)));
    edges.extend((0..20).map(|w| (41, w)));
    let g = graph(42, &edges);
    let mut ks = vec![1; 42];
    ks[40] = 20;
    ks[41] = 3;
    let t = table(&g, &ks).unwrap();
    for (vertex, value) in [(40, 64), (41, 32)] {
        assert_eq!(t.methods[vertex as usize], Method::ParityDp);
        assert_eq!(t.values[vertex as usize], value);
        let k = ks[vertex as usize];
        for target in 0..value {
            let picks = find_split_picks(&g, &ks, &t, vertex, target).unwrap();
            assert_picks(&g, k, &t.values, vertex, target, &picks);
        }
        assert_eq!(find_split_picks(&g, &ks, &t, vertex, value), None);
    }
    let narrow: Vec<u64> = (0..40).collect();
    assert_eq!(choose_method(&narrow, 20, 1 << 12), Err(40 << 7));
}

#[test]
fn value_overflow_is_an_error() {
    let mut edges = power_chain_edges();
    let chain = table(&graph(65, &edges), &[64; 65]).unwrap();
    let powers: Vec<u64> = std::iter::once(0).chain((0..64).map(|b| 1 << b)).collect();
    assert_eq!(chain.values, powers);
    // Vertex 65 sees 0, 1, 2, ..., 2^63: even sets span everything, and {0} is odd.
    edges.extend((0..65).map(|w| (65, w)));
    for k in [64, 65, 1000] {
        let mut ks = vec![64; 66];
        ks[65] = k;
        let error = table(&graph(66, &edges), &ks).unwrap_err();
        assert_eq!(error, SplitError::ValueOverflow { vertex: 65 });
        assert_eq!(
            error.to_string(),
            "vertex 65: every 64-bit value is one of its options, so its Grundy value (2^64) \
             does not fit in 64 bits"
        );
    }
}

#[test]
fn work_budget_is_an_error() {
    // Vertex 65 sees the 64 independent values 2^0..2^63.
    let mut edges = power_chain_edges();
    edges.extend((1..65).map(|w| (65, w)));
    let g = graph(66, &edges);
    let mut ks = vec![64; 66];
    ks[65] = 20;
    let error = table(&g, &ks).unwrap_err();
    let expected = SplitError::WorkBudget {
        vertex: 65,
        estimated_work: enumeration_cost(64, 20),
        budget: 1 << 26,
        out_degree: 64,
        distinct_values: 64,
        split_count: 20,
    };
    assert_eq!(error, expected);
    assert_eq!(
        error.to_string(),
        "vertex 65: computing its value needs about 2^55 steps, over the budget of 2^26 \
         (out-degree 64 with 64 distinct successor values, K 20)"
    );
    // With K = 3 the options are the values with 1 or 3 bits set; with K = 2, 0 or 2 bits.
    for (k, value) in [(3, 0), (2, 1)] {
        ks[65] = k;
        let t = table(&g, &ks).unwrap();
        assert_eq!((t.values[65], t.methods[65]), (value, Method::Enumerate));
    }
}

#[test]
fn enumeration_cost_saturates() {
    assert_eq!(enumeration_cost(10, 0), 1);
    assert_eq!(enumeration_cost(10, 2), 1 + 10 + 45);
    assert_eq!(enumeration_cost(64, 64), u64::MAX);
    assert_eq!(enumeration_cost(u32::MAX as usize, u32::MAX - 2), u64::MAX);
}

#[test]
fn deep_chain_does_not_recurse() {
    let n = 1_000_000u32;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let t = table(&graph(n, &edges), &vec![1; n as usize]).unwrap();
    assert_eq!(t.values[n as usize - 1], 0);
    assert_eq!(t.values[0], u64::from((n - 1) % 2));
}
