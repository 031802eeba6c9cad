import "server-only";
/** Whether a llama-cpp model `path` names a download (an hf: URI or an http(s) URL) rather than a local file. */
export const isRemoteSource = (source: string): boolean => /^(hf:|https?:\/\/)/i.test(source);
