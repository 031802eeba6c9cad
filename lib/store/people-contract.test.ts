import { onBothBackends } from "./contract-backends";
import { peopleContract } from "./contract-people";

// People and sessions, on both backends.
await onBothBackends(peopleContract);
