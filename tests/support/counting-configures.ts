import type { SandboxProvider } from "@rakazo/sandbox";

/**
 * `provider` with every `screens.configure` into one of its machines recorded in `configures`
 * (the machine's ref, once per call): how the screen tests see whether a mint configured a
 * gateway.
 */
export function countingConfigures(provider: SandboxProvider, configures: string[]): SandboxProvider {
  return {
    ...provider,
    sandbox(ref) {
      const sandbox = provider.sandbox(ref);
      const screens = sandbox.screens;
      if (!screens) return sandbox;
      return {
        ...sandbox,
        screens: {
          ...screens,
          configure: (config) => {
            configures.push(ref);
            return screens.configure(config);
          },
        },
      };
    },
  };
}
