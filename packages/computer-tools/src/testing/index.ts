export { type ContactsApp, contactsAppScript, contactsCsv, startContactsApp } from "./contacts-app.ts";
export { expectContactsExportRecorded } from "./contacts-export.expect.ts";
export {
  runContactsExportScenario,
  type ScenarioResult,
  SUMMARY_PATH,
  summaryFor,
} from "./contacts-export.ts";
