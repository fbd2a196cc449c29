import { useEffect, useRef, useState } from 'react';
import { Icon } from '../../components/icons';
import { Spinner } from '../../components/states';
import { useDebounced } from '../../hooks/use-debounced';

interface Props {
  /** The search in the URL. */
  value: string;
  inFolder: boolean;
  busy: boolean;
  onSearch: (text: string) => void;
}

/**
 * The search box. What is typed is sent once typing pauses; the server
 * matches it anywhere in names, ignoring case, in every folder below the
 * one shown.
 */
export function FileSearch({ value, inFolder, busy, onSearch }: Props) {
  const [text, setText] = useState(value);
  const settled = useDebounced(text.trim(), 300);
  // The last search this box sent: when the URL moves to another (back, a link), the box follows it.
  const sent = useRef(value);

  useEffect(() => {
    if (settled === sent.current) return;
    sent.current = settled;
    onSearch(settled);
  }, [settled, onSearch]);

  useEffect(() => {
    if (value === sent.current) return;
    sent.current = value;
    setText(value);
  }, [value]);

  return (
    <div className="search">
      <Icon name="search" className="search-icon" />
      <label htmlFor="file-search" className="sr-only">
        Search files by name
      </label>
      <input
        id="file-search"
        className="input search-input"
        type="search"
        placeholder={inFolder ? 'Search in this folder…' : 'Search files…'}
        autoComplete="off"
        spellCheck={false}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {busy ? <Spinner size={14} /> : null}
    </div>
  );
}
