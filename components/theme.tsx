"use client";

import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";

const STORAGE_KEY = "genserve.theme";
const ThemeContext = createContext<{ dark: boolean; toggle(): void }>({ dark: false, toggle: () => undefined });

/** Light or dark: the stored choice, else the system's; applied as the `dark` class on <html>. */
export function ThemeProvider({ children }: { children: ReactNode }) {
  const [dark, setDark] = useState(false);
  useEffect(() => {
    const stored = localStorage.getItem(STORAGE_KEY);
    setDark(stored ? stored === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches);
  }, []);
  useEffect(() => {
    document.documentElement.classList.toggle("dark", dark);
  }, [dark]);
  const toggle = useCallback(() => {
    setDark((current) => {
      localStorage.setItem(STORAGE_KEY, current ? "light" : "dark");
      return !current;
    });
  }, []);
  return <ThemeContext.Provider value={{ dark, toggle }}>{children}</ThemeContext.Provider>;
}

export const useTheme = () => useContext(ThemeContext);
