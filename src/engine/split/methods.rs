//! The value of one vertex: the cheapest exact method for its successor values and split
//! count, its estimated cost, and running it (for the value, or for the set of successors a
//! winning move adds units to).

use std::ops::ControlFlow;

use super::Method;
use super::algebra::{MexSet, ParityBasis, ParityDp, for_each_option, option_vector};
use crate::engine::interrupt::{Cancelled, Interrupt, Poller};

/// The cheapest exact method for distinct successor `values` and split count `k`, or the
/// estimated steps of the cheapest one when they exceed `budget`.
pub(super) fn choose_method(values: &[u64], k: u32, budget: u64) -> Result<Method, u64> {
    let d = values.len() as u64;
    if d == 0 {
        return Ok(Method::Terminal);
    }
    if u64::from(k) + 1 >= d {
        return Ok(Method::Span);
    }
    let enumerate = enumeration_cost(values.len(), k);
    // The DP costs at least 2 d^2 (module doc): skip its rank computation when it cannot win.
    let parity_dp = if enumerate <= d.saturating_mul(d).saturating_mul(2) {
        u64::MAX
    } else {
        parity_dp_cost(values)
    };
    let (method, cost) = if parity_dp < enumerate {
        (Method::ParityDp, parity_dp)
    } else {
        (Method::Enumerate, enumerate)
    };
    if cost <= budget {
        Ok(method)
    } else {
        Err(cost)
    }
}

/// `sum_{j <= k} C(d, j)`, the sets [`for_each_option`] visits, saturating at `u64::MAX`.
/// Stops as soon as the sum saturates, so at most about 64 terms are computed for large `d`.
pub(super) fn enumeration_cost(d: usize, k: u32) -> u64 {
    let d = d as u128;
    let mut term: u128 = 1;
    let mut total: u128 = 1;
    for j in 0..u128::from(k).min(d) {
        // Exact: C(d, j) * (d - j) is divisible by j + 1, and fits since C(d, j) < 2^64.
        term = term * (d - j) / (j + 1);
        total += term;
        if total >= u128::from(u64::MAX) {
            return u64::MAX;
        }
    }
    total as u64
}

/// `d * 2^r` for [`ParityDp`], saturating at `u64::MAX`.
pub(super) fn parity_dp_cost(values: &[u64]) -> u64 {
    let states = 1u64
        .checked_shl(ParityBasis::of(values).rank())
        .unwrap_or(u64::MAX);
    (values.len() as u64).saturating_mul(states)
}

/// `g` of a vertex with distinct successor `values`, by a `method` that applies to them (as
/// [`choose_method`] returns). `None` when every u64 is an option (only [`Method::Span`]).
#[cfg(test)]
pub(super) fn vertex_value(values: &[u64], k: u32, method: Method) -> Option<u64> {
    polled_vertex_value(values, k, method, &mut Interrupt::new().poller())
        .expect("nothing else holds this interrupt")
}

/// [`vertex_value`], ticking `poller` once per enumerated set or DP state update.
pub(super) fn polled_vertex_value(
    values: &[u64],
    k: u32,
    method: Method,
    poller: &mut Poller<'_>,
) -> Result<Option<u64>, Cancelled> {
    Ok(match method {
        Method::Terminal => Some(0),
        Method::Span => ParityBasis::of(values).span_value(k),
        Method::Enumerate => {
            let mut options = MexSet::new(enumeration_cost(values.len(), k));
            if let ControlFlow::Break(cancelled) = for_each_option(values, k, |xor, _| {
                options.insert(xor);
                match poller.tick(1) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(cancelled) => ControlFlow::Break(cancelled),
                }
            }) {
                return Err(cancelled);
            }
            Some(options.mex())
        }
        Method::ParityDp => {
            let dp = ParityDp::run(values, poller)?;
            // A parity class of the 2^r states holds 2^(r-1) of them.
            let mut options = MexSet::new(1 << (dp.basis.rank() - 1));
            dp.for_each_option(values, k, |xor| options.insert(xor));
            Some(options.mex())
        }
    })
}

/// Indices into `values` of a set of at most `k` values with `|set| ≡ k (mod 2)` whose xor is
/// `target`, found by `method`; `None` if `target` is not an option.
pub(super) fn option_subset(
    values: &[u64],
    k: u32,
    method: Method,
    target: u64,
) -> Option<Vec<usize>> {
    match method {
        Method::Terminal => None,
        Method::Span => {
            let basis = ParityBasis::of(values);
            let set = basis.members(basis.coordinates(option_vector(k, target))?);
            debug_assert!(set.len() <= k as usize, "Span applies only when K >= d - 1");
            Some(set)
        }
        Method::Enumerate => match for_each_option(values, k, |xor, set| {
            if xor == target {
                ControlFlow::Break(set.to_vec())
            } else {
                ControlFlow::Continue(())
            }
        }) {
            ControlFlow::Break(set) => Some(set),
            ControlFlow::Continue(()) => None,
        },
        Method::ParityDp => ParityDp::run(values, &mut Interrupt::new().poller())
            .expect("nothing else holds this interrupt")
            .subset(k, target),
    }
}
