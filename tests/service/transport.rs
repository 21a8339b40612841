//! The HTTP/2 settings the server announces to a client that connects, read off the wire.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::server::{PATIENCE, serve_service, service_config};

/// `SETTINGS_MAX_FRAME_SIZE`: the largest frame payload the sender of the setting takes.
const MAX_FRAME_SIZE: u16 = 0x5;
/// The frame type of SETTINGS.
const SETTINGS: u8 = 0x4;
/// The flag of a SETTINGS frame that acknowledges the peer's.
const ACK: u8 = 0x1;

/// The settings of the server's first SETTINGS frame, as (identifier, value) pairs: the
/// client sends the connection preface and empty settings, then reads frames (at most 16)
/// until the server's own settings come.
async fn server_settings(address: SocketAddr) -> Vec<(u16, u32)> {
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    let read = async {
        for _ in 0..16 {
            let mut header = [0u8; 9];
            socket.read_exact(&mut header).await.unwrap();
            let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
            let mut payload = vec![0u8; length];
            socket.read_exact(&mut payload).await.unwrap();
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
