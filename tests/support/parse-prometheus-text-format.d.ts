/** The parts of parse-prometheus-text-format (no types of its own) the metrics tests read. */
declare module "parse-prometheus-text-format" {
  interface Sample {
    readonly labels?: Record<string, string>;
    readonly value?: string;
  }
  interface Family {
    readonly name: string;
    readonly help: string;
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    readonly metrics: readonly Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
