//! `grundy-server` processes for the fleet tests: started with an environment, ready once
//! their health service says SERVING, stopped with SIGKILL or SIGTERM.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use grundy::proto::grundy_service_client::GrundyServiceClient;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use super::server::PATIENCE;

/// A `grundy-server` process on a loopback port; killed (SIGKILL) when dropped.
pub struct Replica {
    pub child: Child,
    pub url: String,
}

impl Replica {
    /// Starts the binary with `env` and waits until its health service says SERVING.
    pub async fn start(env: &[(&str, &str)]) -> Self {
        Self::start_on("127.0.0.1:0", env).await
    }

    /// As [`Replica::start`], listening on `listen` (to restart one on its port).
    pub async fn start_on(listen: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-server"));
        command
            .env("GRUNDY_LISTEN", listen)
            .env("GRUNDY_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("grundy-server starts");
        let mut lines = super::process::stderr_lines(&mut child);
        let address = tokio::time::timeout(PATIENCE, async {
            while let Some(line) = lines.recv().await {
                if let Some(at) = line.find("\"address\":\"")
                    && line.contains("grundy-server listening")
                {
                    let rest = &line[at + "\"address\":\"".len()..];
                    return rest[..rest.find('"').expect("quoted")].to_string();
                }
            }
            panic!("grundy-server exited before listening");
        })
        .await
        .expect("grundy-server logs its address in time");
        let replica = Self {
            child,
            url: format!("http://{address}"),
        };
        replica.wait_serving().await;
        replica
    }

    /// Readiness as a probe sees it: grpc.health.v1 SERVING for the API service.
    pub async fn wait_serving(&self) {
        let check = async {
            loop {
                if let Ok(channel) = Channel::from_shared(self.url.clone())
                    .unwrap()
                    .connect()
                    .await
                {
                    let request = HealthCheckRequest {
                        service: "grundy.v1.GrundyService".into(),
                    };
                    if let Ok(response) = HealthClient::new(channel).check(request).await
                        && response.into_inner().status() == ServingStatus::Serving
                    {
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(PATIENCE, check)
            .await
            .expect("SERVING in time");
    }

    pub async fn client(&self) -> GrundyServiceClient<Channel> {
        GrundyServiceClient::connect(self.url.clone())
            .await
            .expect("connects")
    }

    /// kill -9, and reap it.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }
}

impl Replica {
    /// Where it listens (`127.0.0.1:PORT`).
    pub fn address(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// SIGTERM (a drain, as a rolling update does), and waits for it to exit.
    pub fn terminate(mut self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        self.child.wait().expect("reaped");
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
