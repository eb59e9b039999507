# syntax=docker/dockerfile:1
# stream-janitor container image. Build from the repository root:
#   docker build -t stream-janitor:0.1.0 .
#   docker build --build-arg NODE_VERSION=24 -t stream-janitor:0.1.0 .   # another LTS line
# The image holds the product only (dist/ without the demo, production dependencies); the
# `demo` target holds the demo's actors for the compose quickstart (deploy/compose/).
#
# Node 20 is end of life; build on an LTS line (22, 24 or 26), chosen at build time. The default
# is the newest LTS line, and .ci/run runs the whole suite on this major too (what ships is what
# is tested): change both together.
ARG NODE_VERSION=26

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json LICENSE ./
COPY config/tsconfig.build.json config/
COPY src/ src/
# --ignore-scripts: no dependency runs code at install; the build is run explicitly.
RUN npm ci --ignore-scripts && npm run build && npm prune --omit=dev

# The demo's producer and consumers (npm run demo), for deploy/compose/docker-compose.yml only.
FROM node:${NODE_VERSION}-bookworm-slim AS demo
ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
USER 1000:1000
ENTRYPOINT ["node", "/app/dist/demo/runDemo.js"]

# What ships: the daemon without the demo.
FROM build AS product
RUN rm -rf dist/demo

FROM node:${NODE_VERSION}-bookworm-slim
# Kept equal to package.json (test/deploy/dockerfile.test.ts checks it).
ARG VERSION=0.1.0
ARG SOURCE_URL=https://github.com/stream-janitor/stream-janitor
LABEL org.opencontainers.image.title="stream-janitor" \
      org.opencontainers.image.description="Keeps Redis Streams consumer groups healthy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="MIT"
# Node flags through the environment: a Kubernetes `command:` or `docker run --entrypoint`
# override keeps them, which a flag in the entrypoint would not. Source maps on; the V8 heap
# capped at 160 MB: left to itself, V8 sizes the heap from the host (or the whole container
# limit) and collects a scrape's garbage so lazily that RSS climbs about 45 MB per scrape at
# 10,000 groups, past a 256Mi limit. Raise it with the limit for more groups
# (deploy/kubernetes/README.md, "Resources"). MALLOC_ARENA_MAX: glibc gives each thread that
# allocates (zlib and DNS run on libuv's pool) an arena of its own, which stays mapped; two
# arenas cut a leader of 10,000 groups from 236-248 MB RSS to 218 MB (test/bench/RESULTS.md).
ENV NODE_ENV=production NODE_OPTIONS="--enable-source-maps --max-old-space-size=160" MALLOC_ARENA_MAX=2
WORKDIR /app
# The MIT license asks for its notice in every copy: the image is one.
COPY --from=product /app/package.json /app/LICENSE ./
COPY --from=product /app/node_modules/ node_modules/
COPY --from=product /app/dist/ dist/
RUN ln -s /app/dist/cli.js /usr/local/bin/stream-janitor && chmod +x /app/dist/cli.js
# Numeric (the `node` user of the official images), so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9478
# Exec form, no shell in between: SIGTERM reaches Node, and the daemon stops gracefully.
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["run"]
