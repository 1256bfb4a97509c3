export { readTree } from "./fixtures.ts";
export { putRawObject, startTestS3Server, type TestS3Server } from "./s3-server.ts";
