declare module "s3rver/lib/models/account.js" {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
  const AWSAccountModule: { readonly DUMMY_ACCOUNT: AWSAccount };
  export default AWSAccountModule;
}
