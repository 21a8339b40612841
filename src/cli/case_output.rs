//! What a test case's stream hands to the in-order writer: its judge output, in chunks.

use tokio::sync::mpsc;

use super::error::RunError;

/// What a test case hands to the in-order writer.
pub(super) enum CaseOutput {
    /// Judge output of the case, in order.
    Text(Vec<u8>),
    /// The case is complete.
    Done,
    /// The case ended with this error, after the text before it.
    Failed(RunError),
}

/// Hands `text` to the in-order writer; fails quietly when the writer has stopped.
pub(super) async fn send_text(
    output: &mpsc::Sender<CaseOutput>,
    text: Vec<u8>,
) -> Result<(), RunError> {
    if text.is_empty() {
        return Ok(());
    }
    output
        .send(CaseOutput::Text(text))
        .await
        .map_err(|_| RunError::OutputClosed)
}
