import { onBothBackends } from "./contract-backends";
import { storageContract } from "./contract-storage";

// What a key may hold, on both backends.
await onBothBackends(storageContract);
