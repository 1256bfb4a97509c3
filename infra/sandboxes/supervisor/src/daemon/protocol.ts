/**
 * The supervisor's wire protocol lives in @rakazo/protocol (the method table with params and
 * result schemas, the answer shape); re-exported here for the supervisor's own modules.
 */
export type {
  ActResultWire,
  HealthResult,
  ObserveResult,
  SlotInfoWire,
  SlotState,
  SupervisorAnswer,
} from "@rakazo/protocol";
