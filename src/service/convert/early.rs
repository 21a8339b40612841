//! Verdicts sent before their batch is answered. A stream that asks for moves or position
//! analyses can take seconds a query (a sum of several tokens is searched exactly), so its
//! answers go out as they are found instead of once the whole batch is: the responses of a
//! batch may be several messages in any case (see [`super::split`]), and the client sees the
//! same sequence of verdicts.
//!
//! Only the query about to be answered is known, not how long it will take, so the verdicts
//! go at query boundaries: before a search when none ran since they last went (answers that
//! took no search do not wait for one), or when one did and [`SEARCH_GAP`] has passed since
//! they last went (a slow search's answer does not wait for the next), and before any query
//! once [`EARLY_AFTER`] has. Quick searches (microseconds on a small graph) thus share
//! messages, a message costing more than such a search. A quick search's answer, and those
//! after it, wait for the search that follows where the stream can take them
//! ([`super::handoff`]): if that search takes long, they go while it runs.

use std::time::{Duration, Instant};

use super::handoff::{EARLY_AFTER, JobSide};
use crate::proto;

/// How long after the verdicts last went a search's answer waits for the next search: at
/// most a message a millisecond for a run of quick searches.
const SEARCH_GAP: Duration = Duration::from_millis(1);

/// Hands the verdicts of a batch answered so far to the stream, query by query (see the
/// module's documentation). Without a hand-off (a stream that sends nothing early), it
/// leaves them for the batch's response.
pub(crate) struct EarlyVerdicts<'a> {
    out: Option<&'a JobSide>,
    /// When the batch began, or verdicts last went from the job (not when the stream took
    /// those that waited too long).
    last: Instant,
    /// Whether a query that may search was answered since then.
    searched: bool,
}

impl<'a> EarlyVerdicts<'a> {
    /// Early verdicts for a batch that begins now, handed to `out`.
    pub(crate) fn new(out: Option<&'a JobSide>) -> Self {
        Self {
            out,
            last: Instant::now(),
            searched: false,
        }
    }

    /// Called before each query of an expensive stream, with the verdicts answered so far
    /// (full `verdicts`, then the `packed` ones), and whether the query may search (a
    /// position of several tokens, analysed): sends them when they are due, and before a
    /// search leaves them where the stream can take them otherwise. The packed verdicts carry
    /// on from the next query id, their indexes counted anew. Returns how many packed
    /// queries left the buffers.
    pub(crate) fn before_query(
        &mut self,
        verdicts: &mut Vec<proto::Verdict>,
        packed: Option<&mut proto::PackedVerdicts>,
        searches: bool,
    ) -> usize {
        let Some(out) = self.out else { return 0 };
        let packed_count = packed.as_ref().map_or(0, |packed| packed.outcomes.len());
        if verdicts.is_empty() && packed_count == 0 {
            self.searched |= searches;
            return 0;
        }
        let waited = Instant::now().saturating_duration_since(self.last);
        let due = waited >= EARLY_AFTER || (searches && (!self.searched || waited >= SEARCH_GAP));
        if due {
            out.send_pending(verdicts, packed);
            self.last = Instant::now();
            self.searched = searches;
        } else if searches {
            out.wait(verdicts, packed);
        } else {
            return 0;
        }
        packed_count
    }
}

#[cfg(test)]
mod tests {
    use super::super::handoff::{StreamSide, handoff};
    use super::*;

    fn verdict(query_id: u64) -> proto::Verdict {
        proto::Verdict {
            query_id,
            ..Default::default()
        }
    }

    /// An instant the time waited reads as zero from (saturating), whatever the machine's
    /// speed.
    fn just_now() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    /// The query ids of each full-verdict message the job sent so far.
    fn sent_ids(stream: &mut StreamSide) -> Vec<Vec<u64>> {
        stream
            .sent()
            .iter()
            .map(|response| response.verdicts.iter().map(|v| v.query_id).collect())
            .collect()
    }

    #[test]
    fn quick_answers_go_before_a_search_and_packed_ids_carry_on() {
        let (job, mut stream) = handoff(usize::MAX);
        let mut early = EarlyVerdicts::new(Some(&job));
        early.last = just_now();
        let mut verdicts = Vec::new();
        let mut packed = proto::PackedVerdicts {
            first_query_id: 100,
            ..Default::default()
        };
        // Nothing answered yet: nothing to send.
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), false),
            0
        );
        verdicts.push(verdict(7));
        // A quick query next: the verdict waits.
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), false),
            0
        );
        packed.outcomes = vec![1, 2];
        packed.nim_sums = vec![0, 3];
        packed.over_budget = vec![1];
        // A search next, none since the verdicts last went: they go.
        assert_eq!(
            early.before_query(&mut verdicts, Some(&mut packed), true),
            2
        );
        assert_eq!(packed.first_query_id, 102);
        assert!(packed.outcomes.is_empty() && packed.over_budget.is_empty());
        assert!(verdicts.is_empty());
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].verdicts, vec![verdict(7)]);
        let packed = sent[0].packed_verdicts.as_ref().unwrap();
        assert_eq!(
            (packed.first_query_id, packed.over_budget.clone()),
            (100, vec![1])
        );
    }

    #[test]
    fn a_search_answer_waits_for_the_next_search_only_when_it_came_quickly() {
        let (job, mut stream) = handoff(usize::MAX);
        let mut early = EarlyVerdicts::new(Some(&job));
        let mut verdicts = vec![verdict(1)];
        early.last = just_now();
        early.before_query(&mut verdicts, None, true);
        assert_eq!(sent_ids(&mut stream), [vec![1]]);
        // The search's answer, moments later: it waits for the next search, where the stream
        // can take it.
        verdicts.push(verdict(2));
        early.last = just_now();
        early.before_query(&mut verdicts, None, true);
        assert!(verdicts.is_empty() && sent_ids(&mut stream).is_empty());
        // A search that took a while: its answer goes before the next, with the one waiting.
        verdicts.push(verdict(3));
        early.last = Instant::now() - SEARCH_GAP;
        early.before_query(&mut verdicts, None, true);
        assert!(verdicts.is_empty());
        assert_eq!(sent_ids(&mut stream), [vec![2, 3]]);
        assert!(stream.rest().is_empty());
    }

    #[test]
    fn answers_that_waited_long_enough_go_before_any_query() {
        let (job, mut stream) = handoff(usize::MAX);
        let mut early = EarlyVerdicts::new(Some(&job));
        let mut verdicts = vec![verdict(1)];
        early.last -= EARLY_AFTER;
        assert_eq!(early.before_query(&mut verdicts, None, false), 0);
        assert!(verdicts.is_empty());
        // Full verdicts only: no packed columns appear.
        let sent = stream.sent();
        assert_eq!(sent.len(), 1);
        assert!(sent[0].packed_verdicts.is_none());
    }

    #[test]
    fn without_a_handoff_the_verdicts_stay_for_the_response() {
        let mut early = EarlyVerdicts::new(None);
        let mut verdicts = vec![verdict(1)];
        early.last -= EARLY_AFTER;
        assert_eq!(early.before_query(&mut verdicts, None, true), 0);
        assert_eq!(verdicts, vec![verdict(1)]);
    }
}
