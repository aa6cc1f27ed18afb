import { fieldError } from './errors';

// What an uploaded product image is, told by its own first bytes (never by its name or the Content-Type alone).

export const MAX_IMAGE_BYTES = 2 * 1024 * 1024;

const IMAGE_TYPES = {
  'image/png': { extension: 'png', matches: (b: Uint8Array) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  'image/jpeg': { extension: 'jpg', matches: (b: Uint8Array) => startsWith(b, [0xff, 0xd8, 0xff]) },
  // RIFF <4 bytes of length> WEBP
  'image/webp': { extension: 'webp', matches: (b: Uint8Array) => startsWith(b, [0x52, 0x49, 0x46, 0x46]) && startsWith(b.subarray(8), [0x57, 0x45, 0x42, 0x50]) },
} as const;

export type ImageType = keyof typeof IMAGE_TYPES;
export const IMAGE_CONTENT_TYPES = Object.keys(IMAGE_TYPES) as ImageType[];

const startsWith = (bytes: Uint8Array, signature: number[]) => bytes.length >= signature.length && signature.every((byte, i) => bytes[i] === byte);

/** `<64 hex>.<png|jpg|webp>`: the only names /media/ answers to. */
export const IMAGE_NAME = /^[0-9a-f]{64}\.(png|jpg|webp)$/;

const contentTypeByExtension = Object.fromEntries(Object.entries(IMAGE_TYPES).map(([type, { extension }]) => [extension, type])) as Record<string, ImageType>;
export const contentTypeOfName = (name: string): ImageType => contentTypeByExtension[name.slice(name.lastIndexOf('.') + 1)];

/**
 * The image's type, when the declared Content-Type is one of ours and the bytes' signature says the same; a 422 on
 * `image` otherwise. Parameters of the header (`; charset=...`) are ignored.
 */
export function checkedImageType(bytes: Uint8Array, contentType: string | undefined): ImageType {
  const declared = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (bytes.length === 0) throw fieldError('image', 'The image is empty: send its bytes as the request body.');
  if (bytes.length > MAX_IMAGE_BYTES) throw imageTooLarge();
  if (!(declared in IMAGE_TYPES)) throw fieldError('image', `Content-Type must be one of ${IMAGE_CONTENT_TYPES.join(', ')}.`);
  const type = declared as ImageType;
  if (!IMAGE_TYPES[type].matches(bytes)) throw fieldError('image', `The bytes are not a ${IMAGE_TYPES[type].extension.toUpperCase()} image (Content-Type ${type}).`);
  return type;
}

export const imageTooLarge = () => fieldError('image', `The image may be at most ${MAX_IMAGE_BYTES / (1024 * 1024)} MB.`);

export const imageExtension = (type: ImageType) => IMAGE_TYPES[type].extension;
