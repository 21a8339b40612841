//! HTTP/1.1 exchanges over a raw socket, for the routes served besides gRPC (the playground's,
//! JSON over HTTP): no client crate between the test and the bytes.

use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::server::{PATIENCE, TestServer};

/// One HTTP/1.1 exchange on a fresh connection: (status code, headers, body).
pub async fn exchange(server: &TestServer, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    exchange_at(server.address, head, body).await
}

/// [`exchange`] with whatever listens at `address` (the metrics exporter, say).
pub async fn exchange_at(address: SocketAddr, head: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    exchange_on(stream, &address.to_string(), head, body).await
}

/// [`exchange`] on a connection already open (a TLS session, say), to `host`.
pub async fn exchange_on<S>(
    mut stream: S,
    host: &str,
    head: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let request = format!(
        "{head}\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    stream.flush().await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut response))
        .await
        .expect("the server answers in time")
        .unwrap();
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let headers = String::from_utf8(response[..split].to_vec()).unwrap();
    let status = headers[9..12].parse().unwrap();
    let mut body = response[split + 4..].to_vec();
    if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    (status, headers, body)
}

/// The body of a `Transfer-Encoding: chunked` answer.
pub fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&body[..line_end]).unwrap(), 16);
        let size = size.unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line_end + 2..line_end + 2 + size]);
        body = &body[line_end + 4 + size..];
    }
}
