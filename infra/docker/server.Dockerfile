# The application layer of the offline server image (build-images.sh): the repository's sources
# with their production node_modules on top of the local rakazo-server-base image (a Debian root
# with Node 24; nothing is pulled). Root-owned, read-only to other users.
ARG BASE
FROM ${BASE}
COPY --chown=0:0 app /app
