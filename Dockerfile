# syntax=docker/dockerfile:1.7
# grundy-server image: built in the official Rust image, run in a distroless one (glibc and
# libgcc only: no shell, no package manager) as the unprivileged user 65532.
#
#   docker build -t grundy:dev .
#   docker run --rm -p 50051:50051 grundy:dev
#
# No protoc is needed: build.rs compiles the .proto files with protox (pure Rust). The
# builder and the runtime are both Debian 12 (bookworm), so the binary's glibc matches.

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
# Only what `cargo build` reads: a change to docs, tests or deploy/ does not rebuild.
COPY Cargo.toml Cargo.lock build.rs ./
COPY proto proto
COPY src src
# The playground's files are compiled into the binary (src/service/web/assets.rs).
COPY web web
# Cargo.toml declares the benchmark target, so its source must exist for the manifest to load.
COPY benches benches
# The registry and target caches survive between builds (BuildKit cache mounts); the binaries
# are copied out of the cached target dir, which is not part of the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin grundy-server --bin grundy \
    && install -D -m 0755 target/release/grundy-server /out/grundy-server \
    && install -D -m 0755 target/release/grundy /out/grundy \
    && mkdir -p /state/grundy

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# An empty directory owned by the runtime user, for --store-dir /var/lib/grundy (mount a
# volume there to keep the graphs across container restarts).
COPY --from=build --chown=65532:65532 /state/grundy /var/lib/grundy
USER 65532:65532
# In a container the server must listen on all interfaces to be reachable; the binary's own
# default stays loopback. 50051: gRPC; 9090: Prometheus metrics when GRUNDY_METRICS_LISTEN is set.
ENV GRUNDY_LISTEN=0.0.0.0:50051
EXPOSE 50051 9090
ENTRYPOINT ["/usr/local/bin/grundy-server"]
