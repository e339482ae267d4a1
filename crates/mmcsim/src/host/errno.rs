//! The errors a system call returns, as Linux numbers them.

/// Errors of file-system operations, as the errno a call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// ENOENT: no such file or directory.
    NoEnt,
    /// EEXIST: the name exists (O_CREAT | O_EXCL, mkdir).
    Exist,
    /// ENOTDIR: a path component is not a directory.
    NotDir,
    /// EISDIR: the operation needs a regular file.
    IsDir,
    /// ENOTEMPTY: rmdir/rename over a non-empty directory.
    NotEmpty,
    /// ENOSPC: no free block or inode.
    NoSpc,
    /// EFBIG: an offset or size beyond the file system's largest file
    /// (`s_maxbytes`).
    FBig,
    /// EBADF: not an open file descriptor.
    BadF,
    /// EINVAL: a bad argument.
    Inval,
    /// EROFS-like: the raw extent layout cannot create, remove or resize.
    NotSupported,
    /// ENOSYS: the operation is not implemented (a FUSE daemon's answer
    /// to an opcode it does not handle).
    NoSys,
}

impl Errno {
    /// The Linux errno number.
    pub fn code(self) -> i64 {
        match self {
            Errno::NoEnt => 2,
            Errno::BadF => 9,
            Errno::Exist => 17,
            Errno::NotDir => 20,
            Errno::IsDir => 21,
            Errno::Inval => 22,
            Errno::FBig => 27,
            Errno::NoSpc => 28,
            Errno::NotSupported => 30,
            Errno::NoSys => 38,
            Errno::NotEmpty => 39,
        }
    }

    /// The errno's symbolic name (`ENOENT`), as the report keys it.
    pub fn name(self) -> &'static str {
        match self {
            Errno::NoEnt => "ENOENT",
            Errno::BadF => "EBADF",
            Errno::Exist => "EEXIST",
            Errno::NotDir => "ENOTDIR",
            Errno::IsDir => "EISDIR",
            Errno::Inval => "EINVAL",
            Errno::FBig => "EFBIG",
            Errno::NoSpc => "ENOSPC",
            Errno::NotSupported => "EROFS",
            Errno::NoSys => "ENOSYS",
            Errno::NotEmpty => "ENOTEMPTY",
        }
    }

    /// The errno of Linux error number `code` (a call's −return value),
    /// when it is one the host returns.
    pub fn from_code(code: i64) -> Option<Errno> {
        [
            Errno::NoEnt,
            Errno::BadF,
            Errno::Exist,
            Errno::NotDir,
            Errno::IsDir,
            Errno::Inval,
            Errno::FBig,
            Errno::NoSpc,
            Errno::NotSupported,
            Errno::NoSys,
            Errno::NotEmpty,
        ]
        .into_iter()
        .find(|e| e.code() == code)
    }
}
