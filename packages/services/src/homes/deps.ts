/** The home store package, as the home verbs use it. */
export * from "@rakazo/homes";
