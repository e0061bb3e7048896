//! Commands sent to a host: typed program + arguments, each quoted for the remote POSIX shell
//! that sshd runs them through, so no argument can ever be read as shell syntax.

use std::fmt;

use thiserror::Error;

/// A program and its arguments, to be run on a remote host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCommand {
    program: String,
    args: Vec<String>,
}

/// A command that cannot be sent. Its `Display` is the English of [`CommandError::words`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    EmptyProgram,
    /// `argument` is the 1-based place of the argument holding the NUL; `None`: the program.
    Nul {
        argument: Option<usize>,
    },
}

impl CommandError {
    /// Why, in catalogue words (`command_words.*`).
    pub fn words(&self) -> crate::words::Words {
        use crate::words::Words;
        match self {
            CommandError::EmptyProgram => Words::new("command_words.empty_program"),
            CommandError::Nul { argument } => {
                let what = match argument {
                    None => Words::new("command_words.program_name"),
                    Some(n) => Words::new("command_words.argument").put("n", n.to_string()),
                };
                Words::new("command_words.nul").put_words("what", what)
            }
        }
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words().english())
    }
}

impl RemoteCommand {
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn program(&self) -> &str {
        &self.program
    }

    /// The program and its arguments as words, for runners that take them without a shell.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// The command line for the remote shell, every word quoted as needed.
    pub fn to_shell(&self) -> Result<String, CommandError> {
        if self.program.is_empty() {
            return Err(CommandError::EmptyProgram);
        }
        if self.program.contains('\0') {
            return Err(CommandError::Nul { argument: None });
        }
        if let Some(i) = self.args.iter().position(|a| a.contains('\0')) {
            return Err(CommandError::Nul {
                argument: Some(i + 1),
            });
        }
        let mut line = shell_quote(&self.program);
        for arg in &self.args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        Ok(line)
    }
}

impl fmt::Display for RemoteCommand {
    /// The quoted form, for showing the user what will run; NUL bytes are shown as `\0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |w: &str| shell_quote(&w.replace('\0', "\\0"));
        f.write_str(&shown(&self.program))?;
        for arg in &self.args {
            write!(f, " {}", shown(arg))?;
        }
        Ok(())
    }
}

/// Quotes one word for a POSIX shell: words made only of characters no shell treats specially
/// stay bare (readable commands in logs), anything else goes in single quotes, where only `'`
/// itself needs care.
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=:,./@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    let mut quoted = String::with_capacity(word.len() + 2);
    quoted.push('\'');
    for c in word.chars() {
        if c == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(c);
        }
    }
    quoted.push('\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(shell_quote("nvidia-smi"), "nvidia-smi");
        assert_eq!(
            shell_quote("--query-gpu=index,uuid,power.draw"),
            "--query-gpu=index,uuid,power.draw"
        );
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("$(reboot)"), "'$(reboot)'");
        assert_eq!(shell_quote("`id`;rm -rf ~"), "'`id`;rm -rf ~'");
        assert_eq!(shell_quote("~"), "'~'");
        assert_eq!(shell_quote("*"), "'*'");
        assert_eq!(shell_quote("line\nbreak"), "'line\nbreak'");
    }

    #[test]
    fn builds_command_lines() {
        let cmd = RemoteCommand::new("nvidia-smi")
            .arg("--format=csv,noheader,nounits")
            .args(["-lms", "1000"]);
        assert_eq!(
            cmd.to_shell(),
            Ok("nvidia-smi --format=csv,noheader,nounits -lms 1000".to_string())
        );
        let hostile = RemoteCommand::new("echo").arg("x'; reboot; '");
        assert_eq!(
            hostile.to_shell(),
            Ok("echo 'x'\\''; reboot; '\\'''".to_string())
        );
        assert_eq!(
            RemoteCommand::new("").to_shell(),
            Err(CommandError::EmptyProgram)
        );
        assert_eq!(
            RemoteCommand::new("ls").arg("a\0b").to_shell(),
            Err(CommandError::Nul { argument: Some(1) })
        );
        let nul = RemoteCommand::new("ls").arg("a\0b").to_shell().err();
        assert_eq!(
            nul.as_ref().map(ToString::to_string).as_deref(),
            Some("argument 1 contains a NUL byte, which no remote command can receive")
        );
        let zh = nul.map(|e| e.words().render("zh-CN")).unwrap_or_default();
        assert!(zh.contains('1') && !zh.contains("argument"), "{zh}");
        assert_eq!(
            RemoteCommand::new("").to_shell().map_err(|e| e.to_string()),
            Err("the remote program name is empty".to_string())
        );
        assert_eq!(RemoteCommand::new("ls").arg("a b").to_string(), "ls 'a b'");
    }

    /// The quoted line, run by a real `sh`, must hand every argument over byte for byte.
    #[test]
    fn sh_receives_the_exact_arguments() {
        let args = [
            "plain",
            "two words",
            "it's",
            "$HOME",
            "`id`",
            "a\"b",
            "back\\slash",
            "new\nline",
            "",
            "*",
            "ünï",
        ];
        let line = RemoteCommand::new("printf")
            .arg("%s\\0")
            .args(args)
            .to_shell()
            .expect("no NUL");
        let Ok(out) = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .output()
        else {
            return;
        };
        let got: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let want: Vec<&[u8]> = args
            .iter()
            .map(|a| a.as_bytes())
            .chain([&b""[..]])
            .collect();
        assert_eq!(got, want);
    }
}
