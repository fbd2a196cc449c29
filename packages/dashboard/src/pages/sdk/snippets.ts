/**
 * Ready-to-paste examples against this server, for one bucket, showing only
 * what the key filled in may do: a read-only key gets a list and a download,
 * never an upload that would answer 403.
 */
export interface SnippetInput {
  baseUrl: string;
  bucketId: string;
  bucketName: string | null;
  apiKey: string | null;
  /** What the key may do; both when no key is filled in. */
  can: { read: boolean; write: boolean };
}

/** The file the examples download: the one they upload, or any the list shows. */
const fileToRead = (can: SnippetInput['can']) => (can.write ? 'hello.txt' : '<a filename from the list>');

const KEY_PLACEHOLDER = '<your API key>';

function exportKey(apiKey: string | null): string {
  return `export PAIL_API_KEY="${apiKey ?? KEY_PLACEHOLDER}"`;
}

export function curlSnippet({ baseUrl, bucketId, bucketName, apiKey, can }: SnippetInput): string {
  const api = `${baseUrl}/api/v1/buckets`;
  const upload = [
    '',
    `# Upload hello.txt to ${bucketName ?? 'your bucket'}`,
    `echo "Hello, Pail!" > hello.txt`,
    `curl -X PUT "${api}/${bucketId}/files/hello.txt" \\`,
    `  -H "x-api-key: $PAIL_API_KEY" \\`,
    `  -H "Content-Type: text/plain" \\`,
    `  --data-binary @hello.txt`,
  ];
  const read = [
    '',
    '# List the files in the bucket',
    `curl "${api}/${bucketId}/files" -H "x-api-key: $PAIL_API_KEY"`,
    '',
    can.write ? '# Download it again' : '# Download a file',
    `curl -o copy "${api}/${bucketId}/files/${fileToRead(can)}" -H "x-api-key: $PAIL_API_KEY"`,
  ];
  return [exportKey(apiKey), ...(can.write ? upload : []), ...(can.read ? read : [])].join('\n');
}

export function sdkSnippet({ baseUrl, bucketId, bucketName, apiKey, can }: SnippetInput): string {
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
    ...(can.write
      ? [
          '',
          "const data = new TextEncoder().encode('Hello, Pail!');",
          "const uploaded = await pail.uploadFile(bucketId, 'hello.txt', data);",
          'console.log(uploaded); // { filename, size, updated }',
        ]
      : []),
    ...(can.read ? ['', `const file = await pail.downloadFile(bucketId, '${fileToRead(can)}');`, 'console.log(file);'] : []),
  ].join('\n');
}

export function fetchSnippet({ baseUrl, bucketId, bucketName, apiKey, can }: SnippetInput): string {
  return [
    `// In your shell first: ${exportKey(apiKey)}`,
    `const baseUrl = '${baseUrl}/api/v1/buckets';`,
    'const apiKey = process.env.PAIL_API_KEY;',
    `const bucketId = ${/^\d+$/.test(bucketId) ? bucketId : `'${bucketId}'`};${bucketName ? ` // ${bucketName}` : ''}`,
    ...(can.write ? fetchUpload : []),
    ...(can.read ? fetchDownload(fileToRead(can)) : []),
  ].join('\n');
}

const fetchUpload = [
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
];

const fetchDownload = (filename: string) => [
  '',
  '// Download',
  `const download = await fetch(\`\${baseUrl}/\${bucketId}/files/${filename}\`, {`,
  "  headers: { 'x-api-key': apiKey },",
  '});',
  "if (!download.ok) throw new Error('Download failed: ' + download.status);",
  'console.log(await download.text());',
];
