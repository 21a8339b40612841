//! Verdicts sent before their batch is answered. A stream that asks for moves or position
//! analyses can take seconds a query (a sum of several tokens is searched exactly), so its
//! answers go out as they are found instead of once the whole batch is: the responses of a
//! batch may be several messages in any case (see [`super::split`]), and the client sees the
//! same sequence of verdicts.

use std::time::{Duration, Instant};

use crate::proto;

/// The most the verdicts already answered wait for the queries after them: once this long
/// has passed since the batch began or since verdicts last went early, they go before the
/// next query. Short enough to read as "at once" at a terminal; long enough that quick
/// queries still share messages.
const EARLY_AFTER: Duration = Duration::from_millis(20);

/// Hands the verdicts of a batch answered so far to the stream, query by query, when they have
/// waited long enough or the next query may search.
pub(crate) struct EarlyVerdicts<'a> {
    send: &'a mut dyn FnMut(proto::EvaluateResponse),
    last: Instant,
}

impl<'a> EarlyVerdicts<'a> {
    /// Early verdicts for a batch that begins now, each response handed to `send`.
    pub(crate) fn new(send: &'a mut dyn FnMut(proto::EvaluateResponse)) -> Self {
        Self {
            send,
            last: Instant::now(),
        }
    }

    /// Called before each query of an expensive stream, with the verdicts answered so far
    /// (full `verdicts`, then the `packed` ones): sends them if the next query may search
    /// (`searches`: it may take long) or they have waited [`EARLY_AFTER`]. The packed
    /// verdicts carry on from the next query id, their indexes counted anew. Returns how
    /// many packed queries went.
    pub(crate) fn before_query(
        &mut self,
        verdicts: &mut Vec<proto::Verdict>,
        packed: Option<&mut proto::PackedVerdicts>,
        searches: bool,
    ) -> usize {
        let packed_count = packed.as_ref().map_or(0, |packed| packed.outcomes.len());
        if verdicts.is_empty() && packed_count == 0 {
            return 0;
        }
        if !searches && self.last.elapsed() < EARLY_AFTER {
            return 0;
        }
        let packed_verdicts = packed.filter(|_| packed_count > 0).map(|packed| {
            let next = proto::PackedVerdicts {
                first_query_id: packed.first_query_id.wrapping_add(packed_count as u64),
                ..Default::default()
            };
            std::mem::replace(packed, next)
        });
        (self.send)(proto::EvaluateResponse {
            verdicts: std::mem::take(verdicts),
            packed_verdicts,
            graph: None,
        });
        self.last = Instant::now();
        packed_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(query_id: u64) -> proto::Verdict {
        proto::Verdict {
            query_id,
            ..Default::default()
        }
    }

    #[test]
    fn answers_go_before_a_query_that_may_search_and_packed_ids_carry_on() {
        let mut sent = Vec::new();
        let mut send = |response| sent.push(response);
        let mut early = EarlyVerdicts::new(&mut send);
        let mut verdicts = Vec::new();
        let mut packed = proto::PackedVerdicts {
            first_query_id: 100,
            ..Default::default()
        };
        // Nothing answered yet: nothing to send.
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), true),
            0
        );
        verdicts.push(verdict(7));
        // A quick query next, moments after the batch began: the verdict waits.
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), false),
            0
        );
        packed.outcomes = vec![1, 2];
        packed.nim_sums = vec![0, 3];
        packed.over_budget = vec![1];
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), true),
            2
        );
        assert_eq!(packed.first_query_id, 102);
        assert!(packed.outcomes.is_empty() && packed.over_budget.is_empty());
        assert!(verdicts.is_empty());
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].verdicts, vec![verdict(7)]);
        let packed = sent[0].packed_verdicts.as_ref().unwrap();
        assert_eq!(
            (packed.first_query_id, packed.over_budget.clone()),
            (100, vec![1])
        );
    }

    #[test]
    fn answers_that_waited_long_enough_go_before_any_query() {
        let mut sent = Vec::new();
        let mut send = |response| sent.push(response);
        let mut early = EarlyVerdicts::new(&mut send);
        let mut verdicts = vec![verdict(1)];
        early.last -= EARLY_AFTER;
        assert_eq!(early.before_query(&mut verdicts, None, false), 0);
        assert!(verdicts.is_empty());
        // Full verdicts only: no packed columns appear.
        assert_eq!(sent.len(), 1);
        assert!(sent[0].packed_verdicts.is_none());
    }
}
