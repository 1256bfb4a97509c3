/**
 * The computer view's later texts (network editing, Activity by who acted), English and German:
 * i18n.ts grew past 400 lines, so they are kept here and merged into its catalogue.
 */
export const viewEn = {
  "network.change": "Change network",
  "network.title": "Network of this computer",
  "network.mode": "Network access",
  "network.hosts": "Allowed hosts, one per line (a port list after a colon: docs.example.com:443,80)",
  "network.save": "Save network",
  "network.saved": "Network saved. It applies when the computer next starts.",
  "network.onlyStopped": "The network can be changed while the computer is not running.",
  "network.badHost": "Not a host name, *.domain or IP address: {line}",
  "network.noHosts": "Name at least one allowed host.",
  "network.unsupported": "This computer's provider cannot enforce that network policy.",
} as const;

export const viewDe: Partial<Record<keyof typeof viewEn, string>> = {
  "network.change": "Netzwerk ändern",
  "network.title": "Netzwerk dieses Computers",
  "network.mode": "Netzwerkzugang",
  "network.hosts": "Erlaubte Hosts, einer pro Zeile (Ports nach einem Doppelpunkt: docs.example.com:443,80)",
  "network.save": "Netzwerk speichern",
  "network.saved": "Netzwerk gespeichert. Es gilt ab dem nächsten Start des Computers.",
  "network.onlyStopped": "Das Netzwerk lässt sich ändern, solange der Computer nicht läuft.",
  "network.badHost": "Kein Hostname, *.domain und keine IP-Adresse: {line}",
  "network.noHosts": "Mindestens einen erlaubten Host angeben.",
  "network.unsupported": "Der Anbieter dieses Computers kann diese Netzwerkregel nicht durchsetzen.",
};
