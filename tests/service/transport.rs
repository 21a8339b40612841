//! The HTTP/2 settings the server announces to a client that connects, read off the wire, and
//! the frames a client then sends it, counted by a relay between the two.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use grundy::proto::{PutGraphRequest, grundy_service_client::GrundyServiceClient};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tonic::transport::Channel;

use crate::support::server::{PATIENCE, chain, serve_service, service_config};

/// The HTTP/2 connection preface a client opens with.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// `SETTINGS_MAX_FRAME_SIZE`: the largest frame payload the sender of the setting takes.
const MAX_FRAME_SIZE: u16 = 0x5;
/// The frame type of DATA.
const DATA: u8 = 0x0;
/// The frame type of SETTINGS.
const SETTINGS: u8 = 0x4;
/// The flag of a SETTINGS frame that acknowledges the peer's.
const ACK: u8 = 0x1;

/// Reads one HTTP/2 frame: its 9-byte header (length, type, flags, stream) and its payload.
async fn read_frame(reader: &mut (impl AsyncRead + Unpin)) -> std::io::Result<([u8; 9], Vec<u8>)> {
    let mut header = [0u8; 9];
    reader.read_exact(&mut header).await?;
    let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
    let mut payload = vec![0u8; length];
    reader.read_exact(&mut payload).await?;
    Ok((header, payload))
}

/// The settings of the server's first SETTINGS frame, as (identifier, value) pairs: the
/// client sends the connection preface and empty settings, then reads frames (at most 16)
/// until the server's own settings come.
async fn server_settings(address: SocketAddr) -> Vec<(u16, u32)> {
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket.write_all(PREFACE).await.unwrap();
    // An empty SETTINGS frame: no payload, on stream 0.
    socket
        .write_all(&[0, 0, 0, SETTINGS, 0, 0, 0, 0, 0])
        .await
        .unwrap();
    let read = async {
        for _ in 0..16 {
            let (header, payload) = read_frame(&mut socket).await.unwrap();
            if header[3] == SETTINGS && header[4] & ACK == 0 {
                return payload
                    .chunks_exact(6)
                    .map(|entry| {
                        let id = u16::from_be_bytes([entry[0], entry[1]]);
                        let value = u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]);
                        (id, value)
                    })
                    .collect();
            }
        }
        panic!("no SETTINGS frame among the server's first 16 frames");
    };
    tokio::time::timeout(PATIENCE, read).await.unwrap()
}

/// The server takes frames of 256 KiB, not HTTP/2's default 16 KiB: a 4 MiB `PutGraph` chunk
/// comes in 16 DATA frames instead of 256.
#[tokio::test]
async fn the_server_takes_frames_of_256_kib() {
    let server = serve_service(service_config()).await;
    let settings = server_settings(server.address).await;
    let max_frame_size = settings
        .iter()
        .find(|&&(setting, _)| setting == MAX_FRAME_SIZE)
        .map(|&(_, value)| value);
    assert_eq!(max_frame_size, Some(256 << 10), "{settings:?}");
}

/// Relays one connection from a client to `server` and back, and records the payload length
/// of every DATA frame the client sends. Returns the address to connect to and the lengths.
async fn counting_relay(server: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<usize>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let lengths = Arc::new(Mutex::new(Vec::new()));
    let recorded = lengths.clone();
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let upstream = TcpStream::connect(server).await.unwrap();
        let (mut from_client, mut to_client) = client.into_split();
        let (mut from_server, mut to_server) = upstream.into_split();
        tokio::spawn(async move { tokio::io::copy(&mut from_server, &mut to_client).await });
        let mut preface = [0u8; 24];
        from_client.read_exact(&mut preface).await.unwrap();
        assert_eq!(&preface, PREFACE);
        to_server.write_all(&preface).await.unwrap();
        // Frame by frame until the client closes the connection.
        while let Ok((header, payload)) = read_frame(&mut from_client).await {
            if header[3] == DATA {
                recorded.lock().unwrap().push(payload.len());
            }
            to_server.write_all(&header).await.unwrap();
            to_server.write_all(&payload).await.unwrap();
        }
    });
    (address, lengths)
}

/// A client that uploads a message of a megabyte sends it in DATA frames of 256 KiB, as the
/// server announced, and the server takes them: the graph is registered. (The client's first
/// 64 KiB, HTTP/2's initial window, may leave in the default 16 KiB frames before the server's
/// settings arrive.)
#[tokio::test]
async fn a_client_sends_frames_of_256_kib_and_the_server_takes_them() {
    let server = serve_service(service_config()).await;
    let (relay, lengths) = counting_relay(server.address).await;
    let channel = Channel::from_shared(format!("http://{relay}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = GrundyServiceClient::new(channel);
    // A path of 300,000 vertices: 300,000 out-degrees of one byte, 299,999 targets of three
    // bytes or fewer, about 1.2 MB in one message.
    let request = PutGraphRequest {
        chunk: Some(chain(300_000)),
    };
    let upload = client.put_graph(tokio_stream::iter([request]));
    let response = tokio::time::timeout(PATIENCE, upload)
        .await
        .expect("the upload in time")
        .expect("the server takes the graph");
    assert!(!response.into_inner().graph_id.is_empty());
    let lengths = lengths.lock().unwrap().clone();
    let sent: usize = lengths.iter().sum();
    let large: usize = lengths.iter().filter(|&&l| l == 256 << 10).sum();
    assert!(sent > 1_000_000, "{sent} bytes of DATA: {lengths:?}");
    assert_eq!(lengths.iter().max(), Some(&(256 << 10)), "{lengths:?}");
    assert!(
        sent - large <= (64 << 10) + (256 << 10),
        "beyond the first 64 KiB, only the last frame is shorter: {lengths:?}"
    );
}
