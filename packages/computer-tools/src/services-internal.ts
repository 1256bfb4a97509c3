/** The service verbs these tools call. */
export * from "@rakazo/services";
