//! Attacks with request bodies: stalled unary messages, renders beside gRPC calls, stalled
//! render bodies.

use std::time::{Duration, Instant};

use anyhow::Result;
use bytes::Bytes;
use grundy::generate::Shape;
use grundy::proto::{self, grundy_service_client::GrundyServiceClient};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tonic::transport::Channel;

use crate::Target;
use crate::observe::*;
use crate::requests::*;

/// 8 `EvaluateBatch` messages of 64 MiB, each on a connection of its own, sent but for their
/// last 10 bytes: the slots they hold (the in-flight gauge), the memory, their answers, and
/// when the memory is back within 16 MiB of where it was (they once held 528 MB, and no slot,
/// for as long as their connections stayed open).
pub(crate) async fn stalled_unary(t: &Target) -> Result<String> {
    // The opening, then one query of 64 Ki tokens again and again (the encodings of the
    // elements of a repeated field concatenate).
    let query = vec![tokens(0, &[0; 1 << 16])];
    let query = proto::EvaluateBatchRequest {
        start: None,
        queries: query,
    }
    .encode_to_vec();
    let start = Some(opening(steps(4, &[1, 2]), None));
    let mut message = proto::EvaluateBatchRequest {
        start,
        queries: vec![],
    }
    .encode_to_vec();
    while message.len() + query.len() <= 64 << 20 {
        message.extend_from_slice(&query);
    }
    let mut frame = vec![0];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message[..message.len() - 10]);
    let frame = Bytes::from(frame);
    let base = reset_peak(t.pid)?;
    let (mut answers, mut senders) = (Vec::new(), Vec::new());
    for _ in 0..8 {
        let tcp = tokio::net::TcpStream::connect(&t.server).await?;
        let (mut h2, connection) = h2::client::handshake(tcp).await?;
        tokio::spawn(connection);
        let uri = format!("http://{}/grundy.v1.GrundyService/EvaluateBatch", t.server);
        let request = http::Request::post(uri).header("content-type", "application/grpc");
        let (response, mut send) =
            h2.send_request(request.header("te", "trailers").body(())?, false)?;
        answers.push(tokio::spawn(raw_status(response)));
        // Each stream is kept open (not reset) until its answer: the task returns it.
        let frame = frame.clone();
        senders.push(tokio::spawn(async move {
            send_all(&mut send, frame).await.map(|()| send)
        }));
    }
    let mut streams = Vec::new();
    for sender in senders {
        streams.push(within(sender).await???);
    }
    let sent = Instant::now();
    let inflight = gauge(t, "grundy_inflight_streams")?;
    let mut ended = 0;
    for answer in answers {
        let status = within(answer).await???;
        ended += usize::from(status.starts_with("4:") && status.contains("start_timeout"));
    }
    let answered = sent.elapsed().as_millis();
    let held = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    let back = back_to(t.pid, base, 16 << 10, sent).await;
    let after = memory_kib(t.pid, "VmRSS").saturating_sub(base);
    drop(streams);
    Ok(format!(
        "held_kib={held} inflight={inflight} start_timeout_answers={ended} \
         answered_after_ms={answered} back_after_ms={back} growth_after_kib={after}"
    ))
}

/// The median latency of 20 small gRPC calls, idle and while four drawings of the largest
/// graph `POST /render` draws (300 vertices) run: drawn on a runtime thread, they held every
/// call of the server for seconds.
pub(crate) async fn render_latency(t: &Target) -> Result<String> {
    async fn twenty_calls(client: &mut GrundyServiceClient<Channel>) -> Result<f64> {
        let mut samples = Vec::new();
        for _ in 0..20 {
            samples.push(small_call(client).await?);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[10])
    }
    let mut client = connect(t).await?;
    twenty_calls(&mut client).await?; // the graph cached, the connection warm
    let idle = twenty_calls(&mut client).await?;
    let drawn = wire(Shape::Cyclic, 300, 2900, 7);
    let values = vec![serde_json::json!({ "finite": 0 }); 300];
    let body = serde_json::json!({
        "out_degrees": drawn.out_degrees,
        "targets": drawn.targets,
        "values": values,
    })
    .to_string();
    let request = render_head(&t.server, body.len()) + &body;
    let mut drawings = Vec::new();
    for _ in 0..4 {
        let (address, request) = (t.server.clone(), request.clone());
        drawings.push(tokio::spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(&address).await?;
            stream.write_all(request.as_bytes()).await?;
            let mut response = Vec::new();
            within(stream.read_to_end(&mut response)).await??;
            anyhow::Ok(http_status(&response).unwrap_or(0))
        }));
    }
    let drawing = r#"grundy_work_jobs_running{kind="render"}"#;
    wait_for_gauge(t, drawing, 2.0).await?;
    let loaded = twenty_calls(&mut client).await?;
    let drawing_after = gauge(t, drawing)?;
    let mut statuses = Vec::new();
    for drawing in drawings {
        statuses.push(within(drawing).await???.to_string());
    }
    let statuses = statuses.join(",");
    Ok(format!(
        "idle_ms={idle:.2} loaded_ms={loaded:.2} drawing_after={drawing_after} statuses={statuses}"
    ))
}

/// 200 `POST /render` bodies of 1 MiB sent but for their last byte (they once held 200 MiB
/// for as long as their connections stayed open): the server's peak memory growth, a small
/// gRPC call meanwhile, the answers and when the last came, and the memory 200 ms later.
pub(crate) async fn stalled_render(t: &Target) -> Result<String> {
    const BODY: usize = 1 << 20;
    let base = reset_peak(t.pid)?;
    let (sent, mut all_sent) = mpsc::channel(200);
    let mut clients = Vec::new();
    for _ in 0..200 {
        let (address, sent) = (t.server.clone(), sent.clone());
        clients.push(tokio::spawn(async move {
            let stream = tokio::net::TcpStream::connect(&address).await?;
            let (mut reader, mut writer) = stream.into_split();
            // Written while the answer is read: a body refused at once is answered before it
            // is sent, and its writes fail.
            let writing = async {
                let _ = writer
                    .write_all(render_head(&address, BODY).as_bytes())
                    .await;
                let _ = writer.write_all(&vec![b' '; BODY - 1]).await;
                let _ = sent.send(()).await;
            };
            let mut response = Vec::new();
            let (_, read) = tokio::join!(writing, within(reader.read_to_end(&mut response)));
            read?.ok();
            anyhow::Ok(http_status(&response).map_or("reset".into(), |code| code.to_string()))
        }));
    }
    for _ in 0..200 {
        within(all_sent.recv()).await?;
    }
    let stalled = Instant::now();
    let side = small_call(&mut connect(t).await?).await?;
    let mut statuses = std::collections::BTreeMap::new();
    for client in clients {
        *statuses.entry(within(client).await???).or_insert(0) += 1;
    }
    let answered = stalled.elapsed().as_millis();
    let held = memory_kib(t.pid, "VmHWM").saturating_sub(base);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = memory_kib(t.pid, "VmRSS").saturating_sub(base);
    let statuses: Vec<String> = statuses
        .iter()
        .map(|(code, n)| format!("{code}x{n}"))
        .collect();
    Ok(format!(
        "peak_growth_kib={held} side_call_ms={side:.1} statuses={} answered_after_ms={answered} \
         growth_after_kib={after}",
        statuses.join(",")
    ))
}
