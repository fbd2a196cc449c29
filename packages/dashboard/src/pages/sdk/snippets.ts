/** Ready-to-paste examples against this server, for one bucket. */
export interface SnippetInput {
  baseUrl: string;
  bucketId: string;
  bucketName: string | null;
  apiKey: string | null;
}

const KEY_PLACEHOLDER = '<your API key>';

function exportKey(apiKey: string | null): string {
  return `export PAIL_API_KEY="${apiKey ?? KEY_PLACEHOLDER}"`;
}

export function curlSnippet({ baseUrl, bucketId, bucketName, apiKey }: SnippetInput): string {
  const api = `${baseUrl}/api/v1/buckets`;
  return [
    exportKey(apiKey),
    '',
    `# Upload hello.txt to ${bucketName ?? 'your bucket'}`,
    `echo "Hello, Pail!" > hello.txt`,
    `curl -X PUT "${api}/${bucketId}/files/hello.txt" \\`,
    `  -H "x-api-key: $PAIL_API_KEY" \\`,
    `  -H "Content-Type: text/plain" \\`,
    `  --data-binary @hello.txt`,
    '',
    '# List the files in the bucket',
    `curl "${api}/${bucketId}/files" -H "x-api-key: $PAIL_API_KEY"`,
    '',
    '# Download it again',
    `curl -o hello-copy.txt "${api}/${bucketId}/files/hello.txt" -H "x-api-key: $PAIL_API_KEY"`,
  ].join('\n');
}

export function sdkSnippet({ baseUrl, bucketId, bucketName, apiKey }: SnippetInput): string {
  return [
    `// In your shell first: ${exportKey(apiKey)}`,
    "import { Pail } from '@pail/sdk';",
    '',
    'const pail = new Pail({',
    `  baseUrl: '${baseUrl}',`,
    '  apiKey: process.env.PAIL_API_KEY!,',
    '});',
    '',
    `const bucketId = ${/^\d+$/.test(bucketId) ? bucketId : `'${bucketId}'`};${bucketName ? ` // ${bucketName}` : ''}`,
    '',
    "const data = new TextEncoder().encode('Hello, Pail!');",
    "const uploaded = await pail.uploadFile(bucketId, 'hello.txt', data);",
    'console.log(uploaded); // { filename, size, updated }',
    '',
    "const file = await pail.downloadFile(bucketId, 'hello.txt');",
    'console.log(file);',
  ].join('\n');
}

export function fetchSnippet({ baseUrl, bucketId, bucketName, apiKey }: SnippetInput): string {
  return [
    `// In your shell first: ${exportKey(apiKey)}`,
    `const baseUrl = '${baseUrl}/api/v1/buckets';`,
    'const apiKey = process.env.PAIL_API_KEY;',
    `const bucketId = ${/^\d+$/.test(bucketId) ? bucketId : `'${bucketId}'`};${bucketName ? ` // ${bucketName}` : ''}`,
    '',
    '// Upload (the body is the file; Content-Type sets its MIME type)',
    'const upload = await fetch(`${baseUrl}/${bucketId}/files/hello.txt`, {',
    "  method: 'PUT',",
    "  headers: { 'x-api-key': apiKey, 'content-type': 'text/plain' },",
    "  body: 'Hello, Pail!',",
    '});',
    'const uploaded = await upload.json();',
    'if (!upload.ok) throw new Error(uploaded.error);',
    'console.log(uploaded.data); // { filename, size, updated }',
    '',
    '// Download',
    'const download = await fetch(`${baseUrl}/${bucketId}/files/hello.txt`, {',
    "  headers: { 'x-api-key': apiKey },",
    '});',
    "if (!download.ok) throw new Error('Download failed: ' + download.status);",
    'console.log(await download.text());',
  ].join('\n');
}
