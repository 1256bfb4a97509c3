/** The lines a person sees on a terminal once API, worker and web all serve. */
export function readyBanner(options: {
  api: string;
  web: string;
  provider: string;
  dataDir: string;
  /** Shown while no BOOTSTRAP_TOKEN is set: what setup from another machine must present. */
  setupCode?: string | undefined;
}): string {
  const { api, web, provider, dataDir, setupCode } = options;
  return [
    "",
    `Rakazo is ready (provider ${provider}, data in ${dataDir})`,
    `  API  ${api}`,
    `  Web  ${web}`,
    "Next: run the README walkthrough in another shell, e.g.",
    `  curl -sS -X POST ${api}/rpc/setup/bootstrap -H 'content-type: application/json' \\`,
    `    -d '{"userName":"me","spaceName":"My Space","botName":"Ada"}'`,
    "  ./rakazo status   ./rakazo computers   ./rakazo token create --user me   (Ctrl-C stops)",
    ...(setupCode
      ? [
          `First-run setup from another machine (or through a proxy) needs the setup code ${setupCode}`,
          `  (also in ${dataDir}/setup-code); from this machine none is needed.`,
        ]
      : []),
    "",
  ].join("\n");
}
