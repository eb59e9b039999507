# syntax=docker/dockerfile:1
# Node 20 is end-of-life; build on an LTS line, chosen at build time.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY tsconfig.json ./
COPY config/tsconfig.build.json config/
COPY src/ src/
RUN npm ci --ignore-scripts && npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
RUN ln -s /app/dist/cli.js /usr/local/bin/stream-janitor && chmod +x /app/dist/cli.js
USER node
EXPOSE 9478
# No shell in between: SIGTERM reaches the daemon, which stops gracefully.
ENTRYPOINT ["node", "--enable-source-maps", "/app/dist/cli.js"]
CMD ["run"]
