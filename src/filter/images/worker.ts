/**
 * The image screening worker (docs/filters.md#image-screening): runs in a worker thread of the
 * screener's pool (screener.ts), never on the event loop; one NSFW model per thread, loaded once
 * on the thread's first task and kept.
 *
 * A task is an image's bytes; the worker
 * 1. refuses bytes that are no JPEG, PNG, GIF, WebP or AVIF by their first bytes (`sniffImage`),
 *    or more than MEDIA_MAX_BYTES (lib/image-limits.ts);
 * 2. reads the header with sharp (libvips) within MEDIA_MAX_PIXELS (`limitInputPixels`), all
 *    frames counted, before any pixel is decoded (a 50 000 × 50 000 PNG stops here);
 * 3. decodes the first frame upright (EXIF orientation), resized to 224 × 224 RGB (`fit: fill`,
 *    alpha dropped), within DECODE_SECONDS (sharp's `timeout`);
 * 4. classifies it with nsfwjs's bundled MobileNetV2 on TensorFlow.js's WebAssembly backend
 *    (`@tensorflow/tfjs-backend-wasm`, its `.wasm` files read from the package: no download).
 * It answers `{moderation}` (the five class scores 0–1, src/item.ts `ImageModeration`) or
 * `{unscreenable: why}`: never throws for a bad image. It posts `{started: token}` to the pool as
 * it starts (the pool's time limit counts running time, not time in the queue).
 */
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import * as nsfwjs from 'nsfwjs';
import sharp from 'sharp';
import type { ImageModeration } from '../../item.ts';
import { MEDIA_MAX_BYTES, MEDIA_MAX_PIXELS, sniffImage } from '../../lib/image-limits.ts';

/** The side of the model's square input, pixels (MobileNetV2). */
export const MODEL_SIDE = 224;
/** Longest decode and resize of one image, seconds (sharp's `timeout`). */
const DECODE_SECONDS = 10;
/** The nice value of a screening thread: below the event loop, as the filter workers (filter/worker.ts). */
const WORKER_NICE = 10;

export interface ScreenTask {
  token: number;
  bytes: Uint8Array;
}

/** The five scores, or why the image could not be screened. */
export type ScreenResult = { moderation: ImageModeration } | { unscreenable: string };

try {
  setPriority(WORKER_NICE);
} catch {
  // not permitted here: the thread keeps the process's priority
}

/** nsfwjs's class names as the item's `moderation` keys. */
const CLASSES: Record<string, keyof ImageModeration> = { Drawing: 'drawing', Hentai: 'hentai', Neutral: 'neutral', Porn: 'porn', Sexy: 'sexy' };

let model: Promise<nsfwjs.NSFWJS> | undefined;

/** The thread's model: the WebAssembly backend, then nsfwjs's bundled MobileNetV2 (about 200 ms, once). */
function loadModel(): Promise<nsfwjs.NSFWJS> {
  return (model ??= (async () => {
    const require = createRequire(import.meta.url);
    setWasmPaths(join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), '/'));
    await tf.setBackend('wasm');
    await tf.ready();
    // nsfwjs logs which bundled model it uses on every load; that says nothing to an operator.
    const info = console.info;
    const log = console.log;
    console.info = console.log = () => {};
    try {
      return await nsfwjs.load('MobileNetV2');
    } finally {
      console.info = info;
      console.log = log;
    }
  })());
}

/** The image as 224 × 224 RGB bytes, or why it cannot be (see the module, steps 1–3). */
export async function modelInput(bytes: Uint8Array): Promise<Uint8Array | { unscreenable: string }> {
  if (bytes.length > MEDIA_MAX_BYTES) return { unscreenable: `larger than ${MEDIA_MAX_BYTES} bytes` };
  if (!sniffImage(bytes)) return { unscreenable: 'not a JPEG, PNG, GIF, WebP or AVIF image' };
  const image = sharp(bytes, { limitInputPixels: MEDIA_MAX_PIXELS, failOn: 'error' });
  const tooLarge = { unscreenable: `more than ${MEDIA_MAX_PIXELS} pixels` };
  try {
    const meta = await image.metadata();
    if ((meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0) * (meta.pages ?? 1) > MEDIA_MAX_PIXELS) return tooLarge;
  } catch (error) {
    return /pixel limit/i.test((error as Error).message) ? tooLarge : { unscreenable: 'could not be decoded' };
  }
  try {
    const { data } = await image
      .rotate()
      .resize(MODEL_SIDE, MODEL_SIDE, { fit: 'fill' })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .timeout({ seconds: DECODE_SECONDS })
      .toBuffer({ resolveWithObject: true });
    if (data.length !== MODEL_SIDE * MODEL_SIDE * 3) return { unscreenable: 'could not be decoded as RGB' };
    return new Uint8Array(data.buffer, data.byteOffset, data.length);
  } catch {
    return { unscreenable: 'could not be decoded' };
  }
}

/** Screens one image (piscina's default export); see the module. */
export default async function screen(task: ScreenTask): Promise<ScreenResult> {
  parentPort?.postMessage({ started: task.token });
  const input = await modelInput(task.bytes);
  if (!(input instanceof Uint8Array)) return input;
  const classifier = await loadModel();
  const tensor = tf.tensor3d(input, [MODEL_SIDE, MODEL_SIDE, 3], 'int32');
  try {
    const predictions = await classifier.classify(tensor, 5);
    const moderation: ImageModeration = { drawing: 0, hentai: 0, neutral: 0, porn: 0, sexy: 0 };
    for (const { className, probability } of predictions) {
      const key = CLASSES[className];
      if (key) moderation[key] = Math.round(probability * 10_000) / 10_000;
    }
    return { moderation };
  } finally {
    tensor.dispose();
  }
}
