//! Queries in, verdicts out: [`QueryEvaluator`] answers the query batches of one stream,
//! naming the field and index of every malformed query in its in-band error.

use std::sync::Arc;

mod misere;

use crate::engine::{
    Analysis, AnalysisError, AnalysisOptions, Evaluation, Interrupt, Move, MoveMemo, Outcome,
    PlayConvention,
};
use crate::proto;
use crate::service::error::ServiceError;

use super::early::EarlySender;
use crate::service::convert::analysis::{self as analysed, MAX_ANALYSED_TOKENS};
use crate::service::convert::batch::{batch_lookups, packed_queries};
use crate::service::convert::outcome::outcome_to_proto;
use crate::service::convert::position::{Position, PositionForm, packed_error, query_error};

/// `Err(CANCELLED)` once `interrupt` is raised: the batch's answers are no longer wanted.
fn still_wanted(interrupt: &Interrupt) -> Result<(), ServiceError> {
    interrupt
        .check()
        .map_err(|cancelled| ServiceError::Analysis(AnalysisError::from(cancelled)))
}

/// A table up to this size is taken to stay in cache while a stream is answered (1 MiB: a
/// core's L2 on the machines measured).
const CACHED_TABLE_BYTES: usize = 1 << 20;

/// What a stream asked for beyond outcomes and nim-sums.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StreamOptions {
    /// `EvaluateStart.explain`: a winning (or draw-keeping) move per verdict.
    pub(crate) explain: bool,
    /// `EvaluateStart.analysis`, within the server's caps: remoteness and every move.
    pub(crate) analysis: Option<AnalysisOptions>,
    /// `EvaluateStart.play_convention`.
    pub(crate) convention: PlayConvention,
    /// The budgets of a misère search when the stream did not ask for the analysis: the
    /// server's caps.
    pub(crate) misere_budgets: AnalysisOptions,
}

impl StreamOptions {
    /// Whether the stream asked for moves or analyses, or plays misère: answers that read
    /// the remoteness table, may search, and go as they are found.
    pub(crate) fn asks_for_more(&self) -> bool {
        self.explain || self.analysis.is_some() || self.convention == PlayConvention::Misere
    }
}

/// Evaluates the queries of one stream against its analysis, reusing buffers (and, with
/// `explain`, the split moves found) from query to query and batch to batch.
pub(crate) struct QueryEvaluator {
    analysis: Arc<Analysis>,
    /// What the stream asked for: moves, the position analysis.
    options: StreamOptions,
    /// The tokens of the position analysed (a buffer).
    tokens: Vec<u32>,
    /// The position of the query being answered (a buffer reused from query to query).
    position: Position,
    /// Split picks by `(vertex, target)`: finding one reruns the vertex's method (up to
    /// 2^26 steps), and a stream's WIN positions often need the same ones.
    moves: MoveMemo,
    /// The interrupt of the batch being answered (see [`QueryEvaluator::answer`]), read by
    /// every path that can search.
    interrupt: Interrupt,
    /// While a job of a stream with moves or analyses runs: where its verdicts go as they
    /// are found ([`Self::hand_over`]).
    early: Option<EarlySender>,
    /// Where the batch being answered stopped when its job gave its turn up: the message
    /// queries, then the packed queries, answered so far.
    resume: (usize, usize),
}

impl QueryEvaluator {
    pub(crate) fn new(analysis: Arc<Analysis>, options: StreamOptions) -> Self {
        Self {
            analysis,
            options,
            tokens: Vec::new(),
            position: Position::default(),
            moves: MoveMemo::default(),
            interrupt: Interrupt::new(),
            early: None,
            resume: (0, 0),
        }
    }

    /// The cost of answering `batches`, in lookups of a cache-resident table (what the work
    /// pool compares with its inline bound): one per query and per token, value or vertex,
    /// 64 per on a table larger than a core's L2 (each a likely miss to DRAM, 50-100 ns).
    /// `None` when the stream asked for winning moves, whose search no count of lookups
    /// bounds.
    pub(crate) fn cost(&self, batches: &[proto::QueryBatch]) -> Option<u64> {
        if self.answers_early() {
            return None;
        }
        let weight = if self.analysis.heap_bytes() <= CACHED_TABLE_BYTES {
            1
        } else {
            64
        };
        Some(weight * batches.iter().map(batch_lookups).sum::<u64>())
    }

    /// Whether the stream asked for moves or analyses, whose answers [`Self::answer`] hands
    /// over as they are found.
    pub(crate) fn answers_early(&self) -> bool {
        self.options.asks_for_more()
    }

    /// Answers one request batch: `queries` as full verdicts, then `packed_tokens` as packed
    /// verdicts (as full verdicts when the stream asked for moves or analyses). Malformed
    /// queries get per-query errors; only a packed batch whose arrays disagree in length fails
    /// as a whole. `interrupt` is read before each query and along a position analysis's
    /// search: once it is raised (nobody waits for the answer any more) the batch stops with
    /// CANCELLED.
    ///
    /// While the evaluator hands its verdicts over ([`Self::hand_over`]: a stream that asked
    /// for moves or analyses, whose answers may take seconds each), every full verdict goes
    /// there as it is found, the batch's end is marked there, and the response returned
    /// holds nothing.
    ///
    /// `give_turn` is asked between queries (after the first one of each call): once it says
    /// so, the batch stops there and `None` is returned; the next call on the same batch goes
    /// on from there. The turn also ends, before any query, while the verdicts handed over
    /// wait for the stream (it does not keep up with the job: see `answer::early`).
    pub(crate) fn answer(
        &mut self,
        batch: &proto::QueryBatch,
        interrupt: &Interrupt,
        give_turn: &dyn Fn() -> bool,
    ) -> Result<Option<proto::EvaluateResponse>, ServiceError> {
        self.interrupt = interrupt.clone();
        // Checked before any query is answered: the batch fails whole, none of its verdicts
        // sent early.
        if let Some(packed) = &batch.packed_tokens {
            let total: u64 = packed.token_counts.iter().map(|&c| u64::from(c)).sum();
            if total != packed.vertices.len() as u64 {
                return Err(ServiceError::protocol(
                    "packed_tokens.token_counts",
                    format!(
                        "packed_tokens: token_counts add up to {total} but vertices has {} entries",
                        packed.vertices.len()
                    ),
                ));
            }
        }
        // The turn ends here too while the stream falls behind, begun or not: a batch of no
        // queries still hands its end over.
        if self.backlogged() {
            return Ok(None);
        }
        let mut response = proto::EvaluateResponse::default();
        if self.early.is_none() {
            response.verdicts.reserve(batch.queries.len());
        }
        // Each call answers one query at least before it may give its turn up.
        let mut answered_any = false;
        for (index, query) in batch.queries.iter().enumerate().skip(self.resume.0) {
            still_wanted(&self.interrupt)?;
            if self.backlogged() || (answered_any && give_turn()) {
                self.resume.0 = index;
                return Ok(None);
            }
            let verdict = self.verdict(query);
            self.deliver(verdict, &mut response.verdicts);
            answered_any = true;
        }
        self.resume.0 = batch.queries.len();
        if let Some(packed) = &batch.packed_tokens {
            if self.answers_early() {
                for (index, offset, tokens) in packed_queries(packed).skip(self.resume.1) {
                    still_wanted(&self.interrupt)?;
                    if self.backlogged() || (answered_any && give_turn()) {
                        self.resume.1 = index;
                        return Ok(None);
                    }
                    let query_id = packed.first_query_id.wrapping_add(index as u64);
                    let verdict = self.packed_verdict_in_full(query_id, offset, tokens);
                    self.deliver(verdict, &mut response.verdicts);
                    answered_any = true;
                }
            } else {
                response.packed_verdicts = Some(self.answer_packed(packed));
            }
        }
        self.resume = (0, 0);
        // A search cut short by the interrupt left its last answer unfinished.
        still_wanted(&self.interrupt)?;
        if let Some(early) = &mut self.early {
            early.batch_end();
        }
        Ok(Some(response))
    }

    /// A full verdict found: to the hand-over while there is one, else to the response.
    fn deliver(&mut self, verdict: proto::Verdict, verdicts: &mut Vec<proto::Verdict>) {
        match &mut self.early {
            Some(early) => early.verdict(verdict),
            None => verdicts.push(verdict),
        }
    }

    /// From now on (a job of a stream with moves or analyses), hands the verdicts over to
    /// `early` as they are found instead of returning them in the responses.
    pub(crate) fn hand_over(&mut self, early: Option<EarlySender>) {
        self.early = early;
    }

    /// Whether the verdicts handed over wait for the stream, past the hand-over's bound.
    fn backlogged(&self) -> bool {
        self.early.as_ref().is_some_and(EarlySender::backlogged)
    }

    /// Whether verdicts are handed over (then the responses hold none).
    pub(crate) fn hands_over(&self) -> bool {
        self.early.is_some()
    }

    /// Ends the hand-over at the job's end: what was gathered goes (a batch that failed may
    /// leave some, which go before its failure), then the channel closes.
    pub(crate) fn end_hand_over(&mut self) {
        if let Some(mut early) = self.early.take() {
            early.flush();
        }
    }

    /// Packed token queries answered in columnar form.
    fn answer_packed(&self, packed: &proto::PackedTokenQueries) -> proto::PackedVerdicts {
        let count = packed.token_counts.len();
        let mut verdicts = proto::PackedVerdicts {
            first_query_id: packed.first_query_id,
            outcomes: Vec::with_capacity(count),
            nim_sums: Vec::with_capacity(count),
            ..Default::default()
        };
        // The whole batch at once when it can be (every vertex in range, a table of finite
        // values); otherwise query by query, each error in its place.
        if self
            .analysis
            .nim_sums_of_token_lists(
                &packed.token_counts,
                &packed.vertices,
                &mut verdicts.nim_sums,
            )
            .is_some()
        {
            let outcome = |nim_sum| i32::from(outcome_to_proto(Outcome::of_nim_sum(nim_sum)));
            let outcomes = verdicts.nim_sums.iter().map(|&nim_sum| outcome(nim_sum));
            verdicts.outcomes.extend(outcomes);
            return verdicts;
        }
        for (index, offset, tokens) in packed_queries(packed) {
            let (outcome, nim_sum) = match self.analysis.evaluate_tokens(tokens) {
                Ok(evaluation) => (outcome_to_proto(evaluation.outcome), evaluation.nim_sum),
                Err(e) => {
                    verdicts.errors.push(proto::PackedQueryError {
                        index: index as u32,
                        error: Some(packed_error(offset, e)),
                    });
                    (proto::Outcome::Unspecified, 0)
                }
            };
            verdicts.outcomes.push(outcome.into());
            verdicts.nim_sums.push(nim_sum);
        }
        verdicts
    }

    /// The full verdict of packed query `query_id` (its tokens at `offset`), with the move or
    /// the analysis the stream asked for.
    fn packed_verdict_in_full(
        &mut self,
        query_id: u64,
        offset: usize,
        tokens: &[u32],
    ) -> proto::Verdict {
        self.position.items.clear();
        self.position.items.extend(tokens.iter().map(|&v| (v, 1)));
        match self.analysis.evaluate(&self.position.items) {
            Ok(evaluation) => self.full_verdict(query_id, PositionForm::Tokens, &evaluation),
            Err(e) => proto::Verdict {
                query_id,
                error: Some(packed_error(offset, e)),
                ..Default::default()
            },
        }
    }

    /// The move shown with a verdict on `self.position.items`, when the stream asked for moves.
    fn explained_move(
        &mut self,
        form: PositionForm,
        evaluation: &Evaluation,
    ) -> Option<proto::Move> {
        if !self.options.explain {
            return None;
        }
        let move_ =
            self.analysis
                .best_move_memo(&self.position.items, evaluation, &mut self.moves)?;
        Some(self.move_to_proto(form, move_))
    }

    /// The position's tokens, one entry per token (vertex repeated by its count), into the
    /// `tokens` buffer the searches read. False, with nothing laid out, for more than
    /// [`MAX_ANALYSED_TOKENS`] tokens: the counts are the client's, their sum may overflow,
    /// and it is never trusted to size a buffer before it is checked.
    fn fill_tokens(&mut self) -> bool {
        let total = self
            .position
            .items
            .iter()
            .try_fold(0u64, |total, &(_, count)| total.checked_add(count));
        if total.is_none_or(|total| total > MAX_ANALYSED_TOKENS) {
            return false;
        }
        self.tokens.clear();
        for &(vertex, count) in &self.position.items {
            self.tokens
                .extend(std::iter::repeat_n(vertex, count as usize));
        }
        true
    }

    /// Answers one query. A malformed query yields a verdict with `error` set, never a panic.
    pub(crate) fn verdict(&mut self, query: &proto::Query) -> proto::Verdict {
        match self.try_verdict(query) {
            Ok(verdict) => verdict,
            Err(error) => proto::Verdict {
                query_id: query.id,
                outcome: proto::Outcome::Unspecified.into(),
                error: Some(error),
                ..Default::default()
            },
        }
    }

    fn try_verdict(&mut self, query: &proto::Query) -> Result<proto::Verdict, proto::QueryError> {
        let vertex_count = self.analysis.game().graph().vertex_count();
        let form = self.position.load(query, vertex_count)?;
        let evaluation = self.analysis.evaluate(&self.position.items).map_err(|e| {
            let index = self.position.token_index(form, e.index) as usize;
            query_error(form.vertex_field(index), e.to_string())
        })?;
        Ok(self.full_verdict(query.id, form, &evaluation))
    }

    /// The verdict on `self.position`, evaluated as `evaluation`, with the move (`explain`)
    /// or the analysis the stream asked for.
    fn full_verdict(
        &mut self,
        query_id: u64,
        form: PositionForm,
        evaluation: &Evaluation,
    ) -> proto::Verdict {
        if self.options.convention == PlayConvention::Misere {
            return self.misere_verdict(query_id, form);
        }
        let move_ = self.explained_move(form, evaluation);
        let mut verdict = evaluated_verdict(query_id, evaluation, move_);
        if let Some(options) = self.options.analysis {
            self.fill_analysis(&mut verdict, form, evaluation, &options);
        }
        verdict
    }

    /// The analysis fields of the verdict on `self.position`.
    fn fill_analysis(
        &mut self,
        verdict: &mut proto::Verdict,
        form: PositionForm,
        evaluation: &Evaluation,
        options: &AnalysisOptions,
    ) {
        if self.analysis.game().split_counts().is_some() {
            // One winning move per vertex; the first is the best move.
            let (moves, omitted) = self.analysis.winning_split_moves(
                &self.position.items,
                evaluation,
                &mut self.moves,
                options.max_moves,
            );
            verdict.remoteness_unknown = proto::RemotenessUnknown::NotComputed.into();
            verdict.moves_omitted = omitted;
            verdict.moves = moves
                .into_iter()
                .map(|move_| proto::AnalysedMove {
                    r#move: Some(self.move_to_proto(form, move_)),
                    outcome: proto::Outcome::Win.into(),
                    remoteness: None,
                    over_budget: false,
                })
                .collect();
            verdict.best_move = verdict.moves.first().and_then(|m| m.r#move.clone());
            return;
        }
        if !self.fill_tokens() {
            analysed::fill_too_many_tokens(verdict);
            return;
        }
        let mut progress = flush_early(&mut self.early);
        let analysed = self.analysis.analyse_position_interruptible(
            &self.tokens,
            options,
            &self.interrupt,
            &mut progress,
        );
        // The position passed `evaluate` above, so its vertices are in range; a search cut
        // short leaves the verdict unfinished, and the batch ends with CANCELLED.
        let Ok(Ok(position)) = analysed else {
            return;
        };
        let items = &self.position;
        analysed::fill_sliding(verdict, &position, |from| {
            let item = items
                .items
                .iter()
                .position(|&(vertex, count)| vertex == from && count > 0);
            items.token_index(form, item.unwrap_or(0))
        });
    }

    fn move_to_proto(&self, form: PositionForm, move_: Move) -> proto::Move {
        use proto::r#move::Kind;
        let token_index = |item_index: usize| self.position.token_index(form, item_index);
        let kind = match move_ {
            Move::Slide {
                item_index,
                from,
                to,
            } => Kind::Token(proto::TokenMove {
                token_index: token_index(item_index),
                source_vertex: from,
                target_vertex: to,
            }),
            Move::Split {
                item_index: _,
                vertex,
                odd_targets,
                pair_target,
                pair_count,
            } => Kind::Split(proto::SplitMove {
                vertex,
                odd_targets,
                pair_target: pair_target.unwrap_or(0),
                pair_count,
            }),
        };
        proto::Move { kind: Some(kind) }
    }
}

fn evaluated_verdict(
    query_id: u64,
    evaluation: &Evaluation,
    move_: Option<proto::Move>,
) -> proto::Verdict {
    proto::Verdict {
        query_id,
        outcome: outcome_to_proto(evaluation.outcome).into(),
        nim_sum: evaluation.nim_sum,
        best_move: move_,
        ..Default::default()
    }
}

/// The progress callback of a search: one that lasts hands the verdicts gathered so far over
/// meanwhile.
fn flush_early(early: &mut Option<EarlySender>) -> impl FnMut() + '_ {
    || {
        if let Some(early) = early.as_mut() {
            early.flush();
        }
    }
}
