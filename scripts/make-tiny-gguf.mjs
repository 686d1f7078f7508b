// Writes a tiny llama-architecture GGUF (about 1.8 MB) for testing against a real llama-server
// without downloading a model. Its weights are set by hand rather than trained:
//
// - every token embeds as a one-hot vector, and every attention/FFN weight is zero, so the
//   residual stream of the last position is just that position's own token;
// - the output matrix then maps each token straight to the token that should follow it.
//
// So the model is a bigram table, and greedy decoding of ANY prompt gives exactly
//   "Hello from a real local decoder." then <|im_end|> (EOS): 8 completion tokens.
// After "." the runner-up is "Hello", so with ignore_eos the sentence repeats until max_tokens.
//
// usage: node scripts/make-tiny-gguf.mjs OUT.gguf
import { writeFileSync } from "node:fs";

const outPath = process.argv[2];
if (!outPath) {
  console.error("usage: node scripts/make-tiny-gguf.mjs OUT.gguf");
  process.exit(2);
}

// ---- vocabulary: SentencePiece-style ("llama" tokenizer) with byte fallback ----

const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 };
const vocab = { tokens: [], scores: [], types: [] };
function addToken(text, type, score = 0) {
  vocab.tokens.push(text);
  vocab.types.push(type);
  vocab.scores.push(score);
  return vocab.tokens.length - 1;
}

const UNK = addToken("<unk>", TOKEN_TYPE.unknown);
const BOS = addToken("<s>", TOKEN_TYPE.control);
addToken("</s>", TOKEN_TYPE.control);
addToken("<|im_start|>", TOKEN_TYPE.control);
const IM_END = addToken("<|im_end|>", TOKEN_TYPE.control); // the chat template's end of turn = EOS
// Byte fallback lets any input text tokenize, whatever the prompt.
for (let byte = 0; byte < 256; byte++) {
  addToken(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, TOKEN_TYPE.byte);
}

// "▁" (U+2581) marks a leading space in SentencePiece pieces.
const SENTENCE = ["Hello", "▁from", "▁a", "▁real", "▁local", "▁decoder", "."];
const EXTRA_WORDS = ["▁", "user", "assistant", "system"]; // make chat-template text cheap to tokenize
const wordId = new Map();
[...SENTENCE, ...EXTRA_WORDS].forEach((word, rank) => {
  // Higher score = preferred merge; earlier words win ties.
  wordId.set(word, addToken(word, TOKEN_TYPE.normal, -rank));
});
const idOf = (word) => {
  const id = wordId.get(word);
  if (id === undefined) throw new Error(`not in vocabulary: ${word}`);
  return id;
};
const vocabSize = vocab.tokens.length;

// ---- the bigram table: which token follows which ----

const HELLO = idOf("Hello");
const FULL_STOP = idOf(".");
const nextToken = new Array(vocabSize).fill(HELLO); // anything not in the sentence starts it
for (let i = 0; i + 1 < SENTENCE.length; i++) nextToken[idOf(SENTENCE[i])] = idOf(SENTENCE[i + 1]);
nextToken[FULL_STOP] = IM_END;

// ---- shapes ----

const embedDim = Math.ceil(vocabSize / 8) * 8; // one-hot embeddings need embedDim >= vocabSize
const headCount = 4;
const ffnDim = 16;
const layerCount = 1;
const contextLength = 2048;

// ---- tensors (all F32). dims are GGUF order: dims[0] is the fastest-varying (input) axis ----

const tensors = [];
function tensor(name, dims, fill) {
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  fill?.(data);
  tensors.push({ name, dims, data });
}
const ones = (data) => data.fill(1);

tensor("token_embd.weight", [embedDim, vocabSize], (data) => {
  for (let t = 0; t < vocabSize; t++) data[t * embedDim + t] = 1;
});
tensor("output_norm.weight", [embedDim], ones);
// Row r of output.weight scores output token r; column c reads embedding dimension c (= token c).
tensor("output.weight", [embedDim, vocabSize], (data) => {
  for (let t = 0; t < vocabSize; t++) data[nextToken[t] * embedDim + t] = 10;
  data[HELLO * embedDim + FULL_STOP] = 5; // second choice after ".", used when EOS is ignored
});
for (let layer = 0; layer < layerCount; layer++) {
  const blk = `blk.${layer}`;
  tensor(`${blk}.attn_norm.weight`, [embedDim], ones);
  for (const part of ["attn_q", "attn_k", "attn_v", "attn_output"]) {
    tensor(`${blk}.${part}.weight`, [embedDim, embedDim]);
  }
  tensor(`${blk}.ffn_norm.weight`, [embedDim], ones);
  tensor(`${blk}.ffn_gate.weight`, [embedDim, ffnDim]);
  tensor(`${blk}.ffn_up.weight`, [embedDim, ffnDim]);
  tensor(`${blk}.ffn_down.weight`, [ffnDim, embedDim]);
}

// ---- metadata ----

// ChatML, which llama-server applies for /v1/chat/completions.
const CHAT_TEMPLATE =
  "{% for message in messages %}" +
  "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const GGUF_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 };
const ALIGNMENT = 32;
const metadata = [
  ["general.architecture", "string", "llama"],
  ["general.name", "string", "tollgate-tiny-bigram"],
  ["general.alignment", "u32", ALIGNMENT],
  ["llama.context_length", "u32", contextLength],
  ["llama.embedding_length", "u32", embedDim],
  ["llama.block_count", "u32", layerCount],
  ["llama.feed_forward_length", "u32", ffnDim],
  ["llama.attention.head_count", "u32", headCount],
  ["llama.attention.head_count_kv", "u32", headCount],
  ["llama.attention.layer_norm_rms_epsilon", "f32", 1e-5],
  ["llama.rope.dimension_count", "u32", embedDim / headCount],
  ["llama.vocab_size", "u32", vocabSize],
  ["tokenizer.ggml.model", "string", "llama"],
  ["tokenizer.ggml.tokens", "array", ["string", vocab.tokens]],
  ["tokenizer.ggml.scores", "array", ["f32", vocab.scores]],
  ["tokenizer.ggml.token_type", "array", ["i32", vocab.types]],
  ["tokenizer.ggml.bos_token_id", "u32", BOS],
  ["tokenizer.ggml.eos_token_id", "u32", IM_END],
  ["tokenizer.ggml.unknown_token_id", "u32", UNK],
  ["tokenizer.ggml.add_bos_token", "bool", true],
  ["tokenizer.chat_template", "string", CHAT_TEMPLATE],
];

// ---- GGUF v3 writer (little-endian) ----

const parts = [];
let written = 0;
function emit(buffer) {
  parts.push(buffer);
  written += buffer.length;
}
function scalar(size, write) {
  const b = Buffer.alloc(size);
  write(b);
  emit(b);
}
const u32 = (v) => scalar(4, (b) => b.writeUInt32LE(v));
const u64 = (v) => scalar(8, (b) => b.writeBigUInt64LE(BigInt(v)));
const string = (s) => {
  const bytes = Buffer.from(s, "utf8");
  u64(bytes.length);
  emit(bytes);
};
function value(type, v) {
  switch (type) {
    case "u32": return u32(v);
    case "i32": return scalar(4, (b) => b.writeInt32LE(v));
    case "f32": return scalar(4, (b) => b.writeFloatLE(v));
    case "bool": return emit(Buffer.from([v ? 1 : 0]));
    case "string": return string(v);
    case "array": {
      const [itemType, items] = v;
      u32(GGUF_TYPE[itemType]);
      u64(items.length);
      for (const item of items) value(itemType, item);
      return;
    }
    default: throw new Error(`unknown GGUF type ${type}`);
  }
}
const alignUp = (n) => Math.ceil(n / ALIGNMENT) * ALIGNMENT;
const padTo = (position) => emit(Buffer.alloc(position - written));

emit(Buffer.from("GGUF"));
u32(3); // version
u64(tensors.length);
u64(metadata.length);
for (const [key, type, v] of metadata) {
  string(key);
  u32(GGUF_TYPE[type]);
  value(type, v);
}

// Tensor infos carry offsets relative to the (aligned) start of the data section.
let dataOffset = 0;
for (const t of tensors) {
  string(t.name);
  u32(t.dims.length);
  for (const d of t.dims) u64(d);
  u32(0); // GGML_TYPE_F32
  u64(dataOffset);
  t.offset = dataOffset;
  dataOffset = alignUp(dataOffset + t.data.byteLength);
}

const dataStart = alignUp(written);
padTo(dataStart);
for (const t of tensors) {
  padTo(dataStart + t.offset);
  emit(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

writeFileSync(outPath, Buffer.concat(parts));
console.log(`wrote ${outPath}: ${written} bytes, vocabulary ${vocabSize}, embedding ${embedDim}`);
