export * from "./config/options.js";
