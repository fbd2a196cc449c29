// quickstart.mjs: run with `PAIL_URL=http://localhost:8080 PAIL_API_KEY=pail_... node quickstart.mjs`
import { Pail } from '@pail/sdk';

if (!process.env.PAIL_API_KEY) {
  console.error('Set PAIL_API_KEY to an API key from the dashboard (SDK page), and PAIL_URL to the server.');
  process.exit(1);
}

const pail = new Pail({
  baseUrl: process.env.PAIL_URL ?? 'http://localhost:8080',
  apiKey: process.env.PAIL_API_KEY,
});

// 1. A new private bucket (names: 3-40 of a-z, 0-9, - and _).
const bucket = await pail.createBucket(`quickstart-${Date.now()}`);
console.log(`created bucket ${bucket.id} (${bucket.name})`);

// 2. Upload a file. The body can also be a Buffer, a Blob, a stream or { path }.
const uploaded = await pail.uploadFile(bucket.id, 'hello.txt', 'Hello, Pail!', { contentType: 'text/plain' });
console.log(`uploaded ${uploaded.filename}: ${uploaded.size} bytes`);

// 3. List what is in the bucket.
const { files } = await pail.listFiles(bucket.id);
for (const file of files) console.log(`listed ${file.filename} (${file.size} bytes, ${file.content_type})`);

// 4. Download it again.
const bytes = await pail.downloadFile(bucket.id, 'hello.txt');
console.log(`downloaded ${bytes.length} bytes: ${new TextDecoder().decode(bytes)}`);
