//! Answering a stream's query batches: [`evaluator`] answers them query by query (with the
//! conversions of `super::convert`), [`early`] hands an expensive batch's verdicts to the
//! stream as they are found, encoded, and cuts them into messages under the size limit, and
//! [`fit`] cuts the other responses' verdicts under it.

pub(crate) mod early;
pub(crate) mod evaluator;
pub(crate) mod fit;

pub(crate) use evaluator::{QueryEvaluator, StreamOptions};
pub(crate) use fit::fit_response;
